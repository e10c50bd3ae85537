package hub

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/routinely/routinely/internal/redact"
	"github.com/routinely/routinely/scheduler"
)

// Bucket is the key-value bucket the devices share.
const Bucket = "routinely"

// opTimeout bounds each request to the hub: a claim that gets no answer within it is treated
// as the hub being unreachable (the slot is then kept and caught up once the hub is back).
const opTimeout = 2 * time.Second

// maxIgnored bounds the untrusted keys listed in hub.json (Client.trusted): a forger writing
// many keys must not grow it without end; each is still logged.
const maxIgnored = 100

// markerTTL is how long the bucket keeps the delete markers the server writes when a key's TTL
// expires, so a watcher that reconnects within it still sees the expiry.
const markerTTL = time.Hour

// BucketConfig is the bucket's configuration: one value per key, on disk, with per-key TTLs
// (liveness keys, claims) and their expiry markers. `routinely hub` creates the bucket with it;
// a device creates it when a stock server does not have it yet.
func BucketConfig() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket: Bucket, Description: "Routinely: claims, runs, devices and anchors shared by a person's devices",
		History: 1, Storage: jetstream.FileStorage, LimitMarkerTTL: markerTTL,
	}
}

// Options configure a Client.
type Options struct {
	// Token is the hub's token; with Creds it may be "", and the device then connects with its
	// key instead (a hub of `routinely hub`, which knows the device keys).
	URL, Token string
	// TokenFile is where Token came from ([hub] token_file; "" for a token in routines.toml),
	// named in the error shown when the hub refuses the token.
	TokenFile string
	// RootCAs, if set, are the certificates the hub's TLS certificate must chain to ([hub]
	// ca_file); the connection then must use TLS. nil: TLS only for a tls:// URL or a hub that
	// requires it, verified against the system's roots.
	RootCAs *x509.CertPool
	// ID is this device's id on the hub (LoadID): its liveness key is device.<ID>, and its claims
	// and runs name it. Required; with Creds, Creds.ID replaces it.
	ID string
	// Creds, if set, are this device's credentials on the hub ([hub] credentials_file): its
	// claims and runs are signed with them, and a claim or run of another device counts only
	// when signed by a device the same hub signed (ignored and reported otherwise). nil: this
	// device signs nothing and trusts every claim, as devices before credentials did.
	Creds        *Creds
	Device       string        // this device's name (config.Hub.Device): a label
	LivenessTTL  time.Duration // config.Hub.LivenessTTL
	OfflineLocal bool          // [hub] offline = "local"
	Version      string        // reported to the other devices
	// StateDir, if set, receives hub.json (WriteState) with what this device sees of the hub,
	// for `routinely status` and the desktop app.
	StateDir string
	PID      int // written into hub.json, so a reader can tell it is the live owner's
	Logger   *slog.Logger
	// OnChange, if set, is told that what this device sees of the hub changed in more than its
	// timestamps (connected or not, the error, the devices, their last runs, drift), after
	// hub.json says so: an owner in the desktop app shows it at once instead of at its next
	// refresh. It is called from the client's goroutines and must not block.
	OnChange func()
}

// holder is the value of a claim.* or run.* key: which device, journal and owner epoch holds it,
// for which slot. Device is the device's key on the hub (its liveness key is device.<Device>):
// its id, or the name of a device running a version before ids, which keyed it by name.
type holder struct {
	Device  string    `json:"device"`
	Name    string    `json:"name,omitempty"` // the device's name; "" from a version before ids
	Journal string    `json:"journal"`
	Epoch   uint64    `json:"epoch"`
	Slot    time.Time `json:"slot"`
	At      time.Time `json:"at"`
	// Key, Cert and Sig sign the holder (Creds.sign): the device's public key, the hub's
	// signature over Name and Key, and Key's signature over the holder's content
	// (holderContent). Empty from a device without credentials.
	Key  string `json:"key,omitempty"`
	Cert string `json:"cert,omitempty"`
	Sig  string `json:"sig,omitempty"`
}

// label is the holder's device as people know it: its name.
func (h holder) label() string {
	if h.Name != "" {
		return h.Name
	}
	return h.Device
}

// LastRun is the last run a device reported.
type LastRun struct {
	Routine string    `json:"routine"`
	Slot    time.Time `json:"slot"`
	Outcome string    `json:"outcome"`
}

// deviceInfo is the value of a device.* key. Device is the key's last part, as in holder.
type deviceInfo struct {
	Device  string            `json:"device"`
	Name    string            `json:"name,omitempty"` // "" from a version before ids
	Journal string            `json:"journal"`
	Epoch   uint64            `json:"epoch"`
	Version string            `json:"version"`
	Started time.Time         `json:"started"`
	Seen    time.Time         `json:"seen"`
	Last    *LastRun          `json:"last,omitempty"`
	Defs    map[string]string `json:"defs"`
}

// label is the device's name.
func (d deviceInfo) label() string {
	if d.Name != "" {
		return d.Name
	}
	return d.Device
}

// anchorInfo is the value of an anchor.* key.
type anchorInfo struct {
	Every  time.Duration `json:"every_ns"`
	Anchor time.Time     `json:"anchor"`
}

// anchorEntry is an anchor.* key as the watcher last saw it.
type anchorEntry struct {
	info anchorInfo
	rev  uint64
}

// runEntry is a run.* key as the watcher last saw it.
type runEntry struct {
	h   holder
	rev uint64
}

// seenDevice is a device.* key as the watcher last saw it; alive until its key is deleted or
// expires.
type seenDevice struct {
	info  deviceInfo
	alive bool
}

// Client is one owner's session on the hub. It implements scheduler.Coordinator; New makes
// it, Start connects, Stop disconnects.
type Client struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	nc      *nats.Conn
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	slots   jetstream.Stream // the slot register (SlotStream), nil until found
	watcher jetstream.KeyWatcher
	ready   bool // the watcher has delivered the keys as they were when it started
	rewatch bool // reconnected: start the watcher again (a new hub may have a new stream)
	// watchSince is when the current watcher started: a device whose liveness key is missing
	// counts as gone only once this client has watched for a whole liveness TTL (deadLocked).
	watchSince time.Time
	// conn counts the connections to the hub (1: the first); live is the connection on which this
	// device's liveness key was last published (0: not yet), and liveRev that connection's first
	// publish's revision: a claim waits for live == conn (ensureLive). began is when the bucket
	// of connection beganConn was created (storeBegan): kept across restarts, later after a wipe.
	conn, live, liveRev uint64
	began               time.Time
	beganConn           uint64
	journal             string
	epoch               uint64
	settle              func(routine string, slot time.Time, device, reason string)
	move                func(routine string, a scheduler.Anchor)
	armed               map[string]scheduler.Anchor // the grids this device armed (Publish)
	anchors             map[string]anchorEntry      // the anchor keys as the watcher saw them
	started             time.Time
	devices             map[string]*seenDevice
	runs                map[string]runEntry // routine → its run key
	defs                map[string]string
	last                *LastRun
	pending             []scheduler.HubClaim // releases the hub has not taken yet
	downSince           time.Time            // zero: connected
	downErr             error
	drift               map[string][]string // routine → the devices that define it differently (reported)
	clash               []string            // ids of the live devices that use this device's name (reported)
	shown               string              // stateKey of the State last written (OnChange)
	delivered           map[string]bool     // devices the current watcher delivered before c.ready
	ignored             map[string]string   // hub key → why its claim or run was not trusted (reported)

	stop chan struct{}
	done chan struct{}
}

var _ scheduler.Coordinator = (*Client)(nil)

// New returns a client for opts; nothing is connected until Start.
func New(opts Options) *Client {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.LivenessTTL <= 0 {
		opts.LivenessTTL = 5 * time.Second
	}
	if opts.Creds != nil {
		opts.ID = opts.Creds.ID // the one liveness key the hub lets this device write
	}
	return &Client{opts: opts, log: opts.Logger.With("hub", redact.URL(opts.URL), "device", opts.Device, "device_id", opts.ID),
		devices: map[string]*seenDevice{}, runs: map[string]runEntry{}, defs: map[string]string{}, anchors: map[string]anchorEntry{},
		drift: map[string][]string{}, delivered: map[string]bool{}, ignored: map[string]string{}}
}

// Device is this device's name.
func (c *Client) Device() string { return c.opts.Device }

// LocalWhenOffline reports whether [hub] offline = "local".
func (c *Client) LocalWhenOffline() bool { return c.opts.OfflineLocal }

// Start connects to the hub (in the background when it cannot be reached now: the client keeps
// trying), checks that no other live device uses this device's name (when the hub answers
// within opTimeout; later, a clash is only reported: NameClash in hub.json), and starts the loop
// that refreshes this device's liveness key, watches the other devices and runs, and settles the
// runs of devices that stopped answering. Errors: Options.ID empty; a URL or option the NATS
// client refuses, wrapped; ErrNameTaken (wrapped, saying which device and what to do) when a live
// device of another id and journal has this device's name: nothing is left running then.
func (c *Client) Start(journalID string, epoch uint64, settle func(routine string, slot time.Time, device, reason string), move func(routine string, a scheduler.Anchor)) error {
	if c.opts.ID == "" {
		return errors.New("hub: no device id")
	}
	c.mu.Lock()
	c.journal, c.epoch, c.settle, c.move, c.started = journalID, epoch, settle, move, time.Now()
	c.conn, c.live = 1, 0
	c.downSince, c.downErr = time.Now(), errors.New("connecting")
	c.mu.Unlock()
	tlsOpts := []nats.Option{}
	if c.opts.RootCAs != nil {
		tlsOpts = append(tlsOpts, nats.Secure(&tls.Config{RootCAs: c.opts.RootCAs, MinVersion: tls.VersionTLS12}))
	}
	// With credentials and no token the device proves its key to the hub (which then lets it
	// write only its own liveness key, docs/design.md#98-signed-claims-and-the-trust-model); a
	// token, given as well, is for a stock server, which knows no device keys.
	auth := nats.Token(c.opts.Token)
	if c.opts.Creds != nil && c.opts.Token == "" {
		auth = nats.Nkey(c.opts.Creds.Public(), c.opts.Creds.SignNonce)
	}
	nc, err := nats.Connect(c.opts.URL, append(tlsOpts,
		auth,
		nats.Name("routinely "+c.opts.Device),
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond), nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.Timeout(opTimeout),
		// A hub that vanished without closing the connection (an unplugged cable, a sleeping
		// hub) is noticed within about two seconds.
		nats.PingInterval(time.Second), nats.MaxPingsOutstanding(2),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { c.noteDown(err) }),
		nats.ReconnectHandler(func(*nats.Conn) { c.noteReconnect() }),
		nats.ConnectHandler(func(*nats.Conn) { c.noteReconnect() }),
		// A refused token or an untrusted certificate is not an outage: these say so (the
		// disconnect itself reports only EOF). nats.go gives up after the same refusal twice,
		// so after a refused token the owner must restart with the right one.
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { _ = c.noteRefusal(err) }),
		nats.ErrorHandler(c.asyncError),
		nats.ClosedHandler(func(nc *nats.Conn) { _ = c.noteRefusal(nc.LastError()) }),
		nats.NoCallbacksAfterClientClose(),
	)...)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redact.URL(c.opts.URL), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return fmt.Errorf("jetstream: %w", err)
	}
	c.mu.Lock()
	c.nc, c.js = nc, js
	if nc.IsConnected() {
		c.downSince, c.downErr = time.Time{}, nil
	}
	c.mu.Unlock()
	if err := c.checkName(); err != nil {
		nc.Close()
		return err
	}
	c.mu.Lock()
	stop := make(chan struct{})
	c.stop, c.done = stop, make(chan struct{})
	c.mu.Unlock()
	go c.loop(stop)
	return nil
}

// Stop deletes this device's liveness key (the other devices take over its routines at once),
// stops the loop and closes the connection. Releases the hub has not taken yet are tried once
// more. Calls after the first, or without Start, do nothing.
func (c *Client) Stop() {
	c.mu.Lock()
	stop, nc := c.stop, c.nc
	c.stop = nil
	c.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-c.done
	if kv := c.bucket(); kv != nil && nc.IsConnected() {
		// Short: a hub that is gone must not hold up the owner's exit; the liveness key then
		// expires by itself.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c.retryReleases(ctx, kv)
		if err := c.deleteLiveness(ctx, kv); err != nil {
			c.log.Warn("could not delete this device's liveness key; the other devices take over once it expires", "err", err)
		}
		cancel()
	}
	// Closing the connection ends the watcher too (stopping it first would ask the hub to
	// delete its consumer, waiting up to 5 s for a hub that is gone).
	nc.Close()
	c.mu.Lock()
	c.watcher = nil
	c.mu.Unlock()
	c.writeState()
}

// checkName refuses this device's name when another live device uses it (ErrNameTaken, wrapped
// with the fix), as the hub has it now. A hub that cannot be reached or does not answer within
// opTimeout is not an error: the clash, if any, is then reported once the watcher sees it
// (clashes).
func (c *Client) checkName() error {
	kv := c.bucket()
	if kv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	w, err := kv.WatchFiltered(ctx, []string{"device.*"}, jetstream.IgnoreDeletes())
	if err != nil {
		c.log.Debug("device name check", "err", err)
		return nil
	}
	defer func() { _ = w.Stop() }()
	live := map[string]deviceInfo{}
	for {
		select {
		case e := <-w.Updates():
			if e == nil {
				return c.nameTaken(live)
			}
			var d deviceInfo
			if json.Unmarshal(e.Value(), &d) == nil {
				live[strings.TrimPrefix(e.Key(), "device.")] = d
			}
		case <-ctx.Done():
			c.log.Debug("device name check: the hub did not list the devices in time", "err", ctx.Err())
			return nil
		}
	}
}

// nameTaken returns ErrNameTaken, wrapped with which device and what to do, when one of the live
// devices (key → value) clashes with this one (clashes), else nil.
func (c *Client) nameTaken(live map[string]deviceInfo) error {
	c.mu.Lock()
	journal := c.journal
	c.mu.Unlock()
	for key, d := range live {
		if !c.clashes(key, d, journal) {
			continue
		}
		return fmt.Errorf("%w: another device on the hub %s is called %q too (its id %s, last seen %s): give this device another name with device = \"NAME\" under [hub] in routines.toml, then start again (if that device is this one before its state directory was reset, wait liveness_ttl, %s, and start again)",
			ErrNameTaken, redact.URL(c.opts.URL), c.opts.Device, key, d.Seen.Format(time.RFC3339), c.opts.LivenessTTL)
	}
	return nil
}

// clashes reports whether the device with liveness key device.<key> and value d is another
// device using this device's name: the same name, another id, and another journal (a version
// before ids keyed a device by its name; the same journal is this very device before its
// upgrade, whose key is left from a crash).
func (c *Client) clashes(key string, d deviceInfo, journal string) bool {
	return key != c.opts.ID && d.label() == c.opts.Device && d.Journal != journal
}

// deleteLiveness deletes this device's liveness key if it is still this owner's: after a
// takeover on this device the next owner may have written it already, and deleting that would
// make the other devices take its runs for a dead device's.
func (c *Client) deleteLiveness(ctx context.Context, kv jetstream.KeyValue) error {
	e, err := kv.Get(ctx, deviceKey(c.opts.ID))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil
	}
	if err != nil {
		return err
	}
	var d deviceInfo
	c.mu.Lock()
	journal, epoch := c.journal, c.epoch
	c.mu.Unlock()
	if json.Unmarshal(e.Value(), &d) != nil || d.Journal != journal || d.Epoch != epoch {
		return nil // another owner's now
	}
	err = kv.Delete(ctx, deviceKey(c.opts.ID), jetstream.LastRevision(e.Revision()))
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return nil // rewritten meanwhile, by the next owner
	}
	return err
}

// noteDown records that the connection to the hub was lost (err; nil: closed cleanly).
func (c *Client) noteDown(err error) {
	if err == nil {
		err = errors.New("disconnected")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.downSince.IsZero() {
		c.downSince = time.Now()
		c.log.Warn("hub unreachable", "err", err)
	}
	c.downErr = err
}

// noteRefusal records err as why the hub cannot be reached, and logs it once, when it says the
// hub refused this device or its certificate is not trusted (refusal), and reports whether it
// did; other errors change nothing.
func (c *Client) noteRefusal(err error) bool {
	why := c.refusal(err)
	if why == nil {
		return false
	}
	c.mu.Lock()
	told := c.downErr != nil && c.downErr.Error() == why.Error()
	c.mu.Unlock()
	if !told {
		c.log.Warn("the hub refuses this device", "err", why)
	}
	c.noteDown(why)
	return true
}

// asyncError is the connection's error handler: a refusal is noted (noteRefusal), anything
// else logged, as nats.go's default handler would print it.
func (c *Client) asyncError(_ *nats.Conn, sub *nats.Subscription, err error) {
	if c.noteRefusal(err) {
		return
	}
	if sub != nil {
		c.log.Warn("hub connection error", "err", err, "subject", sub.Subject)
		return
	}
	c.log.Warn("hub connection error", "err", err)
}

// refusal turns err, from a connection attempt, into the error shown with what to do: wrapping
// ErrRefused for a token the hub refused (nats.ErrAuthorization), ErrUntrusted for a TLS
// certificate that does not verify, ErrNoTLS for a hub without TLS when ca_file asks for it;
// nil for any other err.
func (c *Client) refusal(err error) error {
	restart := "then restart this device's owner (`routinely daemon`, or quit and start the app)"
	var verify *tls.CertificateVerificationError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, nats.ErrAuthorization) && c.opts.Creds != nil && c.opts.Token == "":
		return fmt.Errorf("%w (%w): the hub does not know this device's key (%s): it was removed (`routinely hub remove-device %s`) or the hub's key was made anew; run `routinely hub add-device %s` where the hub runs, copy the file it writes over [hub] credentials_file, %s",
			ErrRefused, err, c.opts.Creds.Public(), c.opts.Creds.Name, c.opts.Creds.Name, restart)
	case errors.Is(err, nats.ErrAuthorization):
		where := "into " + c.opts.TokenFile
		if c.opts.TokenFile == "" {
			where = "into [hub] token in routines.toml"
		}
		return fmt.Errorf("%w (%w): the hub's token has changed, or this device's copy is wrong: copy the hub's current token (hub.token in the hub's store; `routinely hub` prints it) %s, %s",
			ErrRefused, err, where, restart)
	case errors.As(err, &verify) && c.opts.RootCAs != nil:
		return fmt.Errorf("%w (%w): copy the hub's current certificate (or the CA that signed it) into [hub] ca_file, %s", ErrUntrusted, err, restart)
	case errors.As(err, &verify):
		return fmt.Errorf("%w (%w): copy the hub's certificate (the file given to --tls-cert) beside routines.toml and name it in [hub] ca_file, %s", ErrUntrusted, err, restart)
	case errors.Is(err, nats.ErrSecureConnWanted):
		return fmt.Errorf("%w (%w), though [hub] ca_file asks for it: start the hub with --tls-cert and --tls-key, or remove ca_file", ErrNoTLS, err)
	}
	return nil
}

// noteReconnect records that the connection is back; the watcher starts again.
func (c *Client) noteReconnect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.downSince.IsZero() {
		c.log.Info("hub reachable", "unreachable_for", time.Since(c.downSince).Round(time.Millisecond))
	}
	c.downSince, c.downErr = time.Time{}, nil
	c.rewatch = true
	// A new connection: this device's liveness key may have expired meanwhile, and what the old
	// watcher showed of the others is no ground to settle anything until a new one has watched.
	c.conn++
	c.ready = false
}

// noteUp records that the hub answered a request (a liveness refresh) on the connection that is
// up: a request that timed out had noted it down (unreachable), and no reconnect may follow to
// clear that, since the connection never dropped.
func (c *Client) noteUp() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.downSince.IsZero() || c.nc == nil || !c.nc.IsConnected() {
		return
	}
	c.log.Info("hub answering again", "unreachable_for", time.Since(c.downSince).Round(time.Millisecond))
	c.downSince, c.downErr = time.Time{}, nil
}

// unreachable returns an error wrapping scheduler.ErrHubUnreachable, with cause, and notes
// the hub down when the connection still looked up (a request timed out).
func (c *Client) unreachable(cause error) error {
	if errors.Is(cause, context.DeadlineExceeded) || errors.Is(cause, nats.ErrTimeout) || errors.Is(cause, nats.ErrNoResponders) {
		c.noteDown(cause)
	}
	return fmt.Errorf("%w: %w", scheduler.ErrHubUnreachable, cause)
}

// bucket returns the bucket, opening (or, on a stock server that lacks it, creating) it first;
// nil when the hub cannot be reached.
func (c *Client) bucket() jetstream.KeyValue {
	c.mu.Lock()
	kv, js, nc := c.kv, c.js, c.nc
	c.mu.Unlock()
	if kv != nil {
		return kv
	}
	if nc == nil || !nc.IsConnected() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	kv, err := js.KeyValue(ctx, Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, BucketConfig())
	}
	if err != nil {
		c.log.Debug("hub bucket not available", "err", err)
		return nil
	}
	c.mu.Lock()
	c.kv = kv
	c.mu.Unlock()
	return kv
}

// connected returns the bucket when claims can be decided now: connected, with no request timed
// out since the hub last answered, with the bucket. Errors: scheduler.ErrHubUnreachable, wrapped
// with since when and why.
func (c *Client) connected() (jetstream.KeyValue, error) {
	c.mu.Lock()
	nc, since, cause := c.nc, c.downSince, c.downErr
	c.mu.Unlock()
	if nc != nil && nc.IsConnected() && !since.IsZero() {
		return nil, fmt.Errorf("%w since %s: %w", scheduler.ErrHubUnreachable, since.Format(time.RFC3339), cause)
	}
	return c.reachable()
}

// reachable returns the bucket when the connection is up, whether or not a request timed out
// since (the loop's refresh then finds out whether the hub answers again: noteUp). Errors:
// scheduler.ErrHubUnreachable, wrapped with since when and why.
func (c *Client) reachable() (jetstream.KeyValue, error) {
	c.mu.Lock()
	nc, since, cause := c.nc, c.downSince, c.downErr
	c.mu.Unlock()
	if nc == nil {
		return nil, fmt.Errorf("%w: not started", scheduler.ErrHubUnreachable)
	}
	if !nc.IsConnected() {
		if cause == nil {
			cause = errors.New(nc.Status().String())
		}
		return nil, fmt.Errorf("%w since %s: %w", scheduler.ErrHubUnreachable, since.Format(time.RFC3339), cause)
	}
	kv := c.bucket()
	if kv == nil {
		return nil, fmt.Errorf("%w: bucket %q not available", scheduler.ErrHubUnreachable, Bucket)
	}
	return kv, nil
}

func deviceKey(id string) string      { return "device." + id }
func runKey(routine string) string    { return "run." + routine }
func anchorKey(routine string) string { return "anchor." + routine }
func claimKey(routine string, slot time.Time) string {
	return "claim." + routine + "." + strconv.FormatInt(slot.UnixNano(), 10)
}

// me is the holder value of this device's claims and runs for slot of routine, signed when
// this device has credentials.
func (c *Client) me(routine string, slot time.Time) holder {
	c.mu.Lock()
	h := holder{Device: c.opts.ID, Name: c.opts.Device, Journal: c.journal, Epoch: c.epoch, Slot: slot.UTC(), At: time.Now().UTC()}
	c.mu.Unlock()
	if c.opts.Creds != nil {
		h.Name = c.opts.Creds.Name
		c.opts.Creds.sign(routine, &h)
	}
	return h
}

// trusted reports whether the holder h of routine, read at the hub key key (of slot; zero for a
// run key, which may hold any slot), is one this device
// may act on: always without credentials; with them, only one signed by a device the hub signed
// (Creds.untrusted). An untrusted holder is ignored as if the key were not there, logged and
// reported in hub.json (Ignored) once per key: anyone with the hub's token can write any key,
// and a forged claim that counted would make every device skip the slot.
func (c *Client) trusted(key, routine string, slot time.Time, h holder) bool {
	if c.opts.Creds == nil {
		return true
	}
	why := c.opts.Creds.untrusted(routine, slot, h)
	if why == "" {
		return true
	}
	c.mu.Lock()
	told := c.ignored[key] == why
	if _, listed := c.ignored[key]; listed || len(c.ignored) < maxIgnored {
		c.ignored[key] = why
	}
	c.mu.Unlock()
	if !told {
		c.log.Warn("ignored a claim no device of this hub signed: someone with the hub's token wrote it, or a device without credentials_file did; this device claims the slot over it",
			"key", key, "why", why, "claimed_by", h.label())
	}
	return false
}

// mine reports whether holder h (trusted) is this journal's own.
func (c *Client) mine(h holder, me holder) bool {
	return h.Journal == me.Journal && (c.opts.Creds == nil || h.Key == me.Key)
}

// alive reports whether device (its key, holder.Device) with journal may still be running: not
// deadLocked.
func (c *Client) alive(device, journal string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.deadLocked(device, journal, time.Now())
}

// deadLocked reports whether device (its key) with journal is known to have stopped answering
// at now: its liveness key is missing (or is another journal's) in what the current watcher
// delivered, and this client has watched for at least a whole liveness TTL. Before that every
// device counts as alive, the safe side (a run is never taken from a device that may still be
// running it): right after the hub came back, a key that expired while it was away says nothing,
// since its device refreshes it only once it has reconnected, which may be after this client.
// c.mu is held.
func (c *Client) deadLocked(device, journal string, now time.Time) bool {
	if !c.ready || now.Sub(c.watchSince) < c.opts.LivenessTTL {
		return false
	}
	d := c.devices[device]
	return d == nil || !d.alive || d.info.Journal != journal
}

// Claim decides on the hub whether this device runs slot of routine (docs/design.md#92-the-claim),
// after publishing this device's liveness key if it has not been on this connection (ensureLive):
//
//  1. the routine's run key: created for this slot, or taken over when it is this journal's
//     own and over (an earlier owner of this journal, or a release the hub has not taken yet);
//     held for the same slot by another device → HubElsewhere; held by another live device for
//     an earlier slot → HubBusy; held by a device whose liveness key expired → settled as
//     interrupted, then taken;
//  2. the slot's claim key, created with a TTL of keep: taken by another device → HubElsewhere
//     (and the run key is let go); this journal's own → won (a claim whose answer was lost, or
//     a restart between the hub claim and the local one: the local claim decides).
//
// Every answer says when the hub's store began (Since, storeBegan): a won slot older than that
// may have run on another device before a wipe, and the engine does not run it.
//
// Errors: scheduler.ErrHubUnreachable (wrapped) when the hub is not connected or does not answer
// within opTimeout; ctx's error.
func (c *Client) Claim(ctx context.Context, routine string, slot time.Time, keep time.Duration) (scheduler.HubClaim, error) {
	out := scheduler.HubClaim{Routine: routine, Slot: slot}
	kv, err := c.connected()
	if err != nil {
		return out, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	me := c.me(routine, slot)
	val, _ := json.Marshal(me)
	err = c.ensureLive(ctx)
	if err == nil {
		out.Since, err = c.storeBegan(ctx, kv)
	}
	var rev uint64
	var other *holder
	if err == nil {
		rev, other, err = c.takeRun(ctx, kv, routine, me, val)
	}
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded {
			return out, err
		}
		return out, c.unreachable(err)
	}
	if other != nil {
		out.Device, out.Running = other.label(), other.Slot
		out.Verdict = scheduler.HubBusy
		if other.Slot.Equal(slot) {
			out.Verdict = scheduler.HubElsewhere
		}
		return out, nil
	}
	out.Rev = rev
	h, err := c.takeClaim(ctx, kv, routine, me, val, keep)
	if err != nil {
		c.letGo(kv, routine, rev)
		return out, c.unreachable(err)
	}
	if h == nil {
		out.Verdict = scheduler.HubWon
		return out, nil
	}
	c.letGo(kv, routine, rev)
	out.Verdict, out.Device = scheduler.HubElsewhere, h.label()
	if out.Device == "" {
		out.Device = "another device"
	}
	return out, nil
}

// takeClaim creates the slot's claim key for me (value val) with a TTL of keep, and returns nil
// when this journal holds it (created now, or its own from before), or the holder that does. A
// claim this device does not trust (trusted: unsigned or not signed by a device of this hub) is
// deleted on its revision and created again, so no forged claim makes a slot skipped; of two
// devices doing so at once, one creates it and the other then finds that one's claim. Errors:
// the hub's, unwrapped.
func (c *Client) takeClaim(ctx context.Context, kv jetstream.KeyValue, routine string, me holder, val []byte, keep time.Duration) (*holder, error) {
	ck := claimKey(routine, me.Slot)
	// The register first: a claim key deleted after its device won it is still recorded there.
	if h, err := c.recorded(ctx, routine, me); err != nil || h != nil {
		if h != nil && c.mine(*h, me) {
			return nil, nil
		}
		return h, err
	}
	for attempt := 0; attempt < 4; attempt++ {
		_, err := kv.Create(ctx, ck, val, jetstream.KeyTTL(keep.Round(time.Second)+time.Second))
		if err == nil {
			return c.record(ctx, routine, me, val, keep)
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, err
		}
		e, err := kv.Get(ctx, ck)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var h holder
		if json.Unmarshal(e.Value(), &h) != nil {
			h = holder{}
		}
		if !c.trusted(ck, routine, me.Slot, h) {
			if err := kv.Delete(ctx, ck, jetstream.LastRevision(e.Revision())); err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
				return nil, err
			}
			continue
		}
		if c.mine(h, me) {
			return c.record(ctx, routine, me, val, keep)
		}
		return &h, nil
	}
	return nil, errors.New("the slot's claim key keeps changing")
}

// storeBegan returns when the hub's bucket was created (the stream's creation time, kept in
// the store across restarts of the hub, new after a wipe), asked once per connection. Errors:
// the hub's, unwrapped.
func (c *Client) storeBegan(ctx context.Context, kv jetstream.KeyValue) (time.Time, error) {
	c.mu.Lock()
	conn, began, done := c.conn, c.began, c.beganConn == c.conn
	c.mu.Unlock()
	if done {
		return began, nil
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok && bs.StreamInfo() != nil {
		began = bs.StreamInfo().Created
	}
	c.mu.Lock()
	if c.conn == conn {
		c.began, c.beganConn = began, conn
	}
	c.mu.Unlock()
	return began, nil
}

// takeRun makes the routine's run key this device's for me.Slot and returns its revision, or
// returns the holder in the way (other). Errors: the hub's, unwrapped.
func (c *Client) takeRun(ctx context.Context, kv jetstream.KeyValue, routine string, me holder, val []byte) (rev uint64, other *holder, err error) {
	key := runKey(routine)
	for attempt := 0; attempt < 4; attempt++ {
		rev, err = kv.Create(ctx, key, val)
		if err == nil {
			return rev, nil, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return 0, nil, err
		}
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue // let go meanwhile: create again
		}
		if err != nil {
			return 0, nil, err
		}
		var h holder
		if json.Unmarshal(e.Value(), &h) != nil {
			h = holder{Device: "unknown"}
		}
		switch {
		case !c.trusted(key, routine, time.Time{}, h):
			// Not a run of any device of this hub: taken over, nobody's run is settled.
			rev, err = kv.Update(ctx, key, val, e.Revision())
			if err == nil {
				return rev, nil, nil
			}
			if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
				return 0, nil, err
			}
		case c.mine(h, me):
			// This journal's own run key. The engine runs one scheduled slot of a routine at a
			// time, so any other slot's run is over: an earlier owner's (its runs were ended
			// before this engine armed anything) or a release the hub has not taken yet.
			if h.Slot.Equal(me.Slot) && h.Epoch == me.Epoch {
				return e.Revision(), nil, nil
			}
			rev, err = kv.Update(ctx, key, val, e.Revision())
			if err == nil {
				c.dropPending(routine)
				return rev, nil, nil
			}
			if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
				return 0, nil, err
			}
		case h.Slot.Equal(me.Slot):
			return 0, &h, nil
		case c.alive(h.Device, h.Journal):
			return 0, &h, nil
		default:
			// Its device stopped answering mid-run: settle it, then take the key.
			if c.settleRun(ctx, kv, routine, runEntry{h: h, rev: e.Revision()}) {
				continue
			}
		}
	}
	return 0, nil, errors.New("the routine's run key keeps changing")
}

// letGo deletes the run key this device took (revision rev) for a slot it did not win.
func (c *Client) letGo(kv jetstream.KeyValue, routine string, rev uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := kv.Delete(ctx, runKey(routine), jetstream.LastRevision(rev)); err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		c.mu.Lock()
		c.pending = append(c.pending, scheduler.HubClaim{Routine: routine, Rev: rev})
		c.mu.Unlock()
	}
}

// Release lets go of the routine's run key that claim holds, now that the run is over
// (outcome: how it ended, reported to the other devices as this device's last run; "" when it
// did not run). When the hub cannot take it now, it is kept and retried by the loop, and by
// the next claim of the routine.
func (c *Client) Release(claim scheduler.HubClaim, outcome string) {
	if outcome != "" {
		c.mu.Lock()
		c.last = &LastRun{Routine: claim.Routine, Slot: claim.Slot.UTC(), Outcome: outcome}
		c.mu.Unlock()
	}
	kv, err := c.connected()
	if err != nil {
		c.mu.Lock()
		c.pending = append(c.pending, claim)
		c.mu.Unlock()
		return
	}
	c.letGo(kv, claim.Routine, claim.Rev)
}

// dropPending forgets the pending releases of routine (its run key was taken over).
func (c *Client) dropPending(routine string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.pending[:0]
	for _, p := range c.pending {
		if p.Routine != routine {
			kept = append(kept, p)
		}
	}
	c.pending = kept
}

// retryReleases tries the releases the hub has not taken yet.
func (c *Client) retryReleases(ctx context.Context, kv jetstream.KeyValue) {
	c.mu.Lock()
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	var kept []scheduler.HubClaim
	for _, p := range pending {
		err := kv.Delete(ctx, runKey(p.Routine), jetstream.LastRevision(p.Rev))
		if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			kept = append(kept, p)
		}
	}
	c.mu.Lock()
	c.pending = append(kept, c.pending...)
	c.mu.Unlock()
}

// settleRun ends a run key whose device stopped answering (its liveness key expired): the
// compare-and-delete on its revision lets exactly one device do it, and that device records
// the run interrupted (the settle callback). It reports whether the key is gone.
func (c *Client) settleRun(ctx context.Context, kv jetstream.KeyValue, routine string, e runEntry) bool {
	err := kv.Delete(ctx, runKey(routine), jetstream.LastRevision(e.rev))
	switch {
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return true // someone else settled it, or its device is back and moved on
	case err != nil:
		return false
	}
	c.mu.Lock()
	settle := c.settle
	if c.runs[routine].rev == e.rev {
		delete(c.runs, routine)
	}
	c.mu.Unlock()
	reason := fmt.Sprintf("device %s stopped answering mid-run (its liveness key expired); recorded by %s", e.h.label(), c.opts.Device)
	c.log.Warn("settled the run of a device that stopped answering", "routine", routine, "slot", e.h.Slot, "on", e.h.label(), "on_id", e.h.Device)
	if settle != nil {
		settle(routine, e.h.Slot, e.h.label(), reason)
	}
	return true
}

// Anchors returns the every-grid anchor shared for each routine of every
// (docs/design.md#96-shared-every-anchor-and-config-drift): the hub's when it has one for the
// same interval and this device's own (local, from its journal) is not an earlier other grid;
// otherwise this device's own, or now truncated to the second without one, which the hub then
// keeps (created when it has none, as after a wiped store; replacing the anchor of another
// interval, as the first device to arm a new interval sets its grid; replacing a later other
// grid, since the earliest one is kept). Routines the hub did not answer for are left out.
func (c *Client) Anchors(ctx context.Context, every map[string]time.Duration, local map[string]time.Time, now time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	kv, err := c.connected()
	if err != nil {
		c.log.Warn("hub unreachable: every-routines keep this device's own anchor until they are armed again", "err", err)
		return out
	}
	names := make([]string, 0, len(every))
	for name := range every {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if a, err := c.anchor(ctx, kv, name, every[name], local[name], now.Truncate(time.Second)); err == nil {
			out[name] = a
		} else {
			c.log.Warn("shared anchor", "routine", name, "err", err)
		}
	}
	return out
}

// sameGrid reports whether anchors a and b of interval every give the same slots (after both).
func sameGrid(a, b time.Time, every time.Duration) bool {
	return every > 0 && a.Sub(b)%every == 0
}

// anchor is Anchors for one routine: local is this device's anchor for every (zero: none).
func (c *Client) anchor(ctx context.Context, kv jetstream.KeyValue, name string, every time.Duration, local, now time.Time) (time.Time, error) {
	key := anchorKey(name)
	own := now
	if !local.IsZero() {
		own = local
	}
	mine, _ := json.Marshal(anchorInfo{Every: every, Anchor: own.UTC()})
	for attempt := 0; attempt < 4; attempt++ {
		e, err := kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
			if _, err := kv.Create(ctx, key, mine); err == nil {
				if !local.IsZero() {
					c.log.Warn("the hub had no grid for this every-routine (a wiped store?): it has this device's again", "routine", name, "anchor", own)
				}
				return own, nil
			} else if !errors.Is(err, jetstream.ErrKeyExists) {
				return time.Time{}, err
			}
			continue
		case err != nil:
			return time.Time{}, err
		}
		var a anchorInfo
		if json.Unmarshal(e.Value(), &a) == nil && a.Every == every && !a.Anchor.IsZero() {
			if local.IsZero() || sameGrid(a.Anchor, local, every) {
				return a.Anchor, nil
			}
			if a.Anchor.Before(local) {
				c.log.Warn("every-routine grid drift: the hub has an earlier grid than this device armed; this device moves to it",
					"routine", name, "hub", a.Anchor, "here", local)
				return a.Anchor, nil
			}
			c.log.Warn("every-routine grid drift: another device armed a later grid than this device's; the hub takes this device's, the earliest",
				"routine", name, "hub", a.Anchor, "here", local)
		}
		if _, err := kv.Update(ctx, key, mine, e.Revision()); err == nil {
			return own, nil
		} else if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return time.Time{}, err
		}
	}
	return time.Time{}, errors.New("the anchor keeps changing")
}

// Publish sets the definition hashes this device reports (sent with its next liveness
// refresh) and the grids it armed, which the loop keeps on the hub (keepAnchors).
func (c *Client) Publish(defs map[string]string, armed map[string]scheduler.Anchor) {
	c.mu.Lock()
	c.defs, c.armed = defs, armed
	c.mu.Unlock()
}

// keepAnchors keeps on the hub the grid this device armed for each shared `every` routine, once
// the watcher has delivered the anchor keys as they are: one the hub lost (a wiped store) is
// published again from this device's; one that is another grid of the same interval (a device
// armed while the hub had none) is drift, warned here, and the earliest grid is kept: the hub
// takes this device's when it is earlier, else this device moves to the hub's (the move
// callback). An interval that differs is a definition that differs (checkDrift), left alone.
func (c *Client) keepAnchors(ctx context.Context, kv jetstream.KeyValue) {
	type job struct {
		name string
		mine scheduler.Anchor
		hub  *anchorEntry
	}
	c.mu.Lock()
	if !c.ready {
		c.mu.Unlock()
		return
	}
	var jobs []job
	for name, mine := range c.armed {
		j := job{name: name, mine: mine}
		if h, ok := c.anchors[name]; ok {
			j.hub = &h
		}
		jobs = append(jobs, j)
	}
	move := c.move
	c.mu.Unlock()
	for _, j := range jobs {
		mine, _ := json.Marshal(anchorInfo{Every: j.mine.Every, Anchor: j.mine.At.UTC()})
		switch {
		case j.hub == nil:
			if _, err := kv.Create(ctx, anchorKey(j.name), mine); err == nil {
				c.log.Warn("the hub had no grid for this every-routine (a wiped store?): it has this device's again", "routine", j.name, "anchor", j.mine.At)
			}
		case j.hub.info.Every != j.mine.Every || sameGrid(j.hub.info.Anchor, j.mine.At, j.mine.Every):
		case j.hub.info.Anchor.Before(j.mine.At):
			c.log.Warn("every-routine grid drift: the hub has an earlier grid than this device armed; this device moves to it",
				"routine", j.name, "hub", j.hub.info.Anchor, "here", j.mine.At)
			if move != nil {
				move(j.name, scheduler.Anchor{Every: j.mine.Every, At: j.hub.info.Anchor})
			}
		default:
			c.log.Warn("every-routine grid drift: another device armed a later grid than this device's; the hub takes this device's, the earliest",
				"routine", j.name, "hub", j.hub.info.Anchor, "here", j.mine.At)
			_, _ = kv.Update(ctx, anchorKey(j.name), mine, j.hub.rev)
		}
	}
}

// loop refreshes the liveness key every quarter of its TTL, keeps the watcher of the other
// devices and runs going, settles the runs of devices that stopped answering, retries
// releases, and writes hub.json. A device's liveness key expiring (or deleted) is acted on as
// soon as the watcher delivers it, not at the next tick, so a dead device's run is settled
// within the TTL of its last refresh.
func (c *Client) loop(stop <-chan struct{}) {
	defer close(c.done)
	every := max(c.opts.LivenessTTL/4, 250*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		c.tick()
		for again := false; !again; {
			var updates <-chan jetstream.KeyValueEntry
			c.mu.Lock()
			if c.watcher != nil {
				updates = c.watcher.Updates()
			}
			c.mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
				again = true
			case e, ok := <-updates:
				if !ok {
					c.mu.Lock()
					c.rewatch = true
					c.mu.Unlock()
					again = true
					break
				}
				c.apply(e)
				if e != nil && strings.HasPrefix(e.Key(), "device.") && e.Operation() != jetstream.KeyValuePut {
					again = true // a device is gone: settle its runs now
				}
			}
		}
	}
}

// tick is one pass of the loop.
func (c *Client) tick() {
	kv, err := c.reachable()
	if err != nil {
		c.mu.Lock()
		nc := c.nc
		c.mu.Unlock()
		if nc != nil {
			// A failed attempt to reconnect calls no handler when the hub refused the
			// handshake (TLS) rather than the dial: its error is only kept here.
			_ = c.noteRefusal(nc.LastError())
		}
		c.writeState()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := c.refresh(ctx); err != nil {
		c.log.Debug("liveness refresh", "err", err)
		c.noteDown(err)
		c.writeState()
		return
	}
	c.ensureWatch(kv)
	c.drainWatch()
	c.retryReleases(ctx, kv)
	c.settleDead(ctx, kv)
	c.keepAnchors(ctx, kv)
	c.checkDrift()
	c.checkClash()
	c.writeState()
}

// refresh writes this device's liveness key with a fresh TTL. The KV API sets a TTL only on
// create, so it publishes to the key's subject with the Nats-TTL header, as Create does.
func (c *Client) refresh(ctx context.Context) error {
	c.mu.Lock()
	info := deviceInfo{Device: c.opts.ID, Name: c.opts.Device, Journal: c.journal, Epoch: c.epoch, Version: c.opts.Version,
		Started: c.started.UTC(), Seen: time.Now().UTC(), Last: c.last, Defs: c.defs}
	js, conn := c.js, c.conn
	c.mu.Unlock()
	data, _ := json.Marshal(info)
	ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: "$KV." + Bucket + "." + deviceKey(c.opts.ID), Data: data},
		jetstream.WithMsgTTL(c.opts.LivenessTTL))
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.conn == conn && c.live != conn {
		c.live, c.liveRev = conn, ack.Sequence
	}
	c.mu.Unlock()
	c.noteUp()
	return nil
}

// ensureLive publishes this device's liveness key unless it was published on the current
// connection already. A claim comes after it: after the hub was away, this device's key may have
// expired, and a run key of this device with no liveness key beside it is what another device
// settles as a dead device's run (docs/design.md#93-liveness-and-who-records-interrupted).
// Errors: the hub's, unwrapped; one saying the connection changed meanwhile.
func (c *Client) ensureLive(ctx context.Context) error {
	c.mu.Lock()
	done := c.live == c.conn
	c.mu.Unlock()
	if done {
		return nil
	}
	if err := c.refresh(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	done = c.live == c.conn
	c.mu.Unlock()
	if !done {
		return errors.New("reconnected while publishing this device's liveness key")
	}
	return nil
}

// ensureWatch starts the watcher of device.*, run.* and anchor.* keys, again after a reconnect.
func (c *Client) ensureWatch(kv jetstream.KeyValue) {
	c.mu.Lock()
	w, re := c.watcher, c.rewatch
	c.rewatch = false
	c.mu.Unlock()
	if w != nil && !re {
		return
	}
	if w != nil {
		_ = w.Stop()
	}
	nw, err := kv.WatchFiltered(context.Background(), []string{"device.*", "run.*", "anchor.*"})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watcher, c.ready = nil, false
	if err != nil {
		c.log.Debug("watch", "err", err)
		c.rewatch = true
		return
	}
	c.watcher, c.watchSince = nw, time.Now()
	c.runs = map[string]runEntry{}
	c.anchors = map[string]anchorEntry{}
	// The devices keep their last known liveness until the watcher has delivered the keys as
	// they are (apply): hub.json, the drift check and the desktop then do not show every other
	// device gone for a tick after each reconnect. Decisions on liveness wait for c.ready anyway.
	c.delivered = map[string]bool{}
}

// drainWatch applies what the watcher delivered since the last tick.
func (c *Client) drainWatch() {
	c.mu.Lock()
	w := c.watcher
	c.mu.Unlock()
	if w == nil {
		return
	}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				c.mu.Lock()
				c.rewatch = true
				c.mu.Unlock()
				return
			}
			c.apply(e)
		default:
			return
		}
	}
}

// apply records one watched entry (nil: the keys as they were have all been delivered). Entries
// are dropped while a new watcher is due (rewatch): they come from the watcher of an earlier
// connection, whose end of first delivery must not make this client ready, and the new one
// delivers every key again.
func (c *Client) apply(e jetstream.KeyValueEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rewatch {
		return
	}
	if e == nil {
		for name, d := range c.devices {
			if !c.delivered[name] {
				d.alive = false // no liveness key on the hub as it is now
			}
		}
		c.ready = true
		return
	}
	kind, name, _ := strings.Cut(e.Key(), ".")
	gone := e.Operation() != jetstream.KeyValuePut
	switch kind {
	case "device":
		d := c.devices[name]
		if d == nil {
			d = &seenDevice{}
			c.devices[name] = d
		}
		c.delivered[name] = true
		d.alive = !gone
		if !gone {
			_ = json.Unmarshal(e.Value(), &d.info)
		}
	case "anchor":
		var a anchorInfo
		if gone || json.Unmarshal(e.Value(), &a) != nil {
			delete(c.anchors, name)
			return
		}
		c.anchors[name] = anchorEntry{info: a, rev: e.Revision()}
	case "run":
		if gone {
			delete(c.runs, name)
			return
		}
		var h holder
		if json.Unmarshal(e.Value(), &h) == nil {
			c.runs[name] = runEntry{h: h, rev: e.Revision()}
		}
	}
}

// settleDead settles the run keys of devices whose liveness key has expired, and lets go of
// this journal's own run keys left by its earlier owners (their runs were ended locally).
func (c *Client) settleDead(ctx context.Context, kv jetstream.KeyValue) {
	now := time.Now()
	c.mu.Lock()
	if !c.ready {
		c.mu.Unlock()
		return
	}
	var dead, stale []string
	entries := map[string]runEntry{}
	for routine, e := range c.runs {
		switch {
		case e.h.Journal == c.journal && e.h.Epoch < c.epoch:
			stale = append(stale, routine)
		case e.h.Journal == c.journal:
		case c.deadLocked(e.h.Device, e.h.Journal, now):
			dead = append(dead, routine)
		}
		entries[routine] = e
	}
	c.mu.Unlock()
	for _, routine := range stale {
		_ = kv.Delete(ctx, runKey(routine), jetstream.LastRevision(entries[routine].rev))
	}
	for _, routine := range dead {
		// A run key no device of this hub signed is nobody's run to record: the next claim of
		// the routine takes it over (takeRun).
		if c.trusted(runKey(routine), routine, time.Time{}, entries[routine].h) {
			c.settleRun(ctx, kv, routine, entries[routine])
		}
	}
}

// checkDrift compares this device's definition hashes with the live devices' and logs each
// routine that is defined differently, once per change.
func (c *Client) checkDrift() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := map[string][]string{}
	for key, d := range c.devices {
		if key == c.opts.ID || !d.alive {
			continue
		}
		for routine, h := range d.info.Defs {
			if mine, ok := c.defs[routine]; ok && mine != h {
				now[routine] = append(now[routine], d.info.label())
			}
		}
	}
	for routine, devs := range now {
		sort.Strings(devs)
		if strings.Join(devs, ",") != strings.Join(c.drift[routine], ",") {
			c.log.Warn("routine defined differently on other devices: it runs under one name with different definitions; make routines.toml the same everywhere",
				"routine", routine, "devices", strings.Join(devs, ", "))
		}
	}
	c.drift = now
}

// checkClash notes the live devices that use this device's name (clashes) and logs them once per
// change: two devices that started at once, or while the hub could not be reached, both pass
// Start's check. The name is only a label, so nothing runs twice or is recorded for the wrong
// device; the histories and status lines naming it are ambiguous until one is renamed.
func (c *Client) checkClash() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var now []string
	for key, d := range c.devices {
		if d.alive && c.clashes(key, d.info, c.journal) {
			now = append(now, key)
		}
	}
	sort.Strings(now)
	if len(now) > 0 && strings.Join(now, ",") != strings.Join(c.clash, ",") {
		c.log.Warn("another device on the hub uses this device's name: give one of them another name (device under [hub] in routines.toml)",
			"name", c.opts.Device, "other_ids", strings.Join(now, ", "))
	}
	c.clash = now
}
