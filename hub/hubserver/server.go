// Package hubserver runs the hub in this process: an embedded NATS server with JetStream, for
// `routinely hub` and for tests. It is kept apart from package hub (the client every device
// links) because the server adds about 10 MB to a binary; only the hub command and tests
// import it (docs/design.md#97-the-hub-process).
package hubserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/routinely/routinely/internal/netaddr"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/internal/atomicfile"
)

// TokenFile is the name of the token file in the store directory.
const TokenFile = "hub.token"

// DefaultListen is where the hub listens unless told otherwise: this machine only.
const DefaultListen = "127.0.0.1:4222"

// ErrUnsafeStore is wrapped when the store directory, its token file or the TLS key can be read
// or changed by others.
var ErrUnsafeStore = errors.New("hub store is not private")

// ErrBadTLS is wrapped when only one of Options.TLSCert and TLSKey is given, or the pair does
// not load.
var ErrBadTLS = errors.New("hub TLS certificate or key not usable")

// Options configure a hub.
type Options struct {
	Listen string // host:port; port 0 picks a free one; "" → DefaultListen
	Store  string // the directory for the token and JetStream's files (created 0700)
	// TLSCert and TLSKey, both or neither: PEM files of the hub's certificate (with its chain)
	// and private key. With them every client must speak TLS (tls:// URLs); the key must not be
	// open to other users.
	TLSCert, TLSKey string
	Logger          *slog.Logger
}

// Server is a running hub.
type Server struct {
	URL string // nats://host:port or tls://host:port, as Listen says (0.0.0.0 for every interface)
	// Reachable are the URLs devices can dial: URL itself for a named host, and for an
	// unspecified host (0.0.0.0, ::) one per address of this machine's network interfaces that
	// are up and not loopback, then one with the host name (ReachableURLs).
	Reachable []string
	Loopback  bool // the hub listens on loopback only: no other machine can reach it
	TLS       bool // clients must speak TLS
	Token     string
	TokenFile string
	ns        *server.Server
}

// Start starts a hub: it creates the store directory (0700) and, at first start, the token
// (32 random bytes, hex, in <store>/hub.token, 0600), starts a NATS server with JetStream on
// Listen requiring that token (and TLS with TLSCert and TLSKey), every write fsynced before it
// is acknowledged (a claim acknowledged is never lost, even by a crash of the hub's machine),
// and creates the bucket. Errors: a bad Listen; only one of TLSCert and TLSKey, or a pair that
// does not load (ErrBadTLS, wrapped); ErrUnsafeStore (wrapped) when the store, token file or
// TLS key is open to others; the server's own (the port in use), wrapped.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Listen == "" {
		opts.Listen = DefaultListen
	}
	host, portText, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want HOST:PORT, e.g. %s: %w", opts.Listen, DefaultListen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("--listen %q: port %q is not a number from 0 to 65535", opts.Listen, portText)
	}
	if port == 0 {
		port = server.RANDOM_PORT // to the NATS server, port 0 means its default, 4222
	}
	tlsConfig, err := loadTLS(opts.TLSCert, opts.TLSKey)
	if err != nil {
		return nil, err
	}
	token, tokenFile, err := ensureStore(opts.Store)
	if err != nil {
		return nil, err
	}
	hubKey, err := hub.LoadHubKey(opts.Store)
	if err != nil {
		return nil, err
	}
	hubPub, _ := hubKey.PublicKey()
	ns, err := server.NewServer(&server.Options{
		ServerName: "routinely-hub", Host: host, Port: port,
		// The token, or a device's key listed in devices/ (auth): a device with credentials
		// writes only its own liveness key (docs/design.md#98-signed-claims-and-the-trust-model).
		CustomClientAuthentication: auth{token: token, store: opts.Store, hubKey: hubPub},
		AlwaysEnableNonce:          true,
		TLSConfig:                  tlsConfig, TLSTimeout: 5, // seconds, for a slow device's handshake
		JetStream: true, StoreDir: filepath.Join(opts.Store, "jetstream"),
		SyncAlways: true,
		NoSigs:     true, // the hub command handles signals
		// The server's own HTTP monitoring and other listeners stay off.
		HTTPPort: 0, MaxPayload: 1 << 20,
	})
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	ns.SetLoggerV2(slogLogger{opts.Logger}, false, false, false)
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("hub: the server did not start listening on %s within 10 s (is the port in use?)", opts.Listen)
	}
	s := &Server{Token: token, TokenFile: tokenFile, ns: ns, TLS: tlsConfig != nil, Loopback: netaddr.Loopback(host)}
	scheme := "nats"
	if s.TLS {
		scheme = "tls"
	}
	bound := strconv.Itoa(ns.Addr().(*net.TCPAddr).Port)
	s.URL = scheme + "://" + net.JoinHostPort(host, bound)
	s.Reachable = ReachableURLs(scheme, host, bound)
	if err := s.ensureBucket(ctx); err != nil {
		ns.Shutdown()
		return nil, err
	}
	return s, nil
}

// ensureBucket creates the bucket and the slot register (or brings their configuration up to
// date).
func (s *Server) ensureBucket(ctx context.Context) error {
	// In process: no network, and no TLS to verify against a certificate that need not name
	// the address the hub listens on.
	nc, err := nats.Connect("", nats.InProcessServer(s.ns), nats.Token(s.Token), nats.Name("routinely hub"))
	if err != nil {
		return fmt.Errorf("hub: connect to itself: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("hub: jetstream: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := js.CreateOrUpdateKeyValue(ctx, hub.BucketConfig()); err != nil {
		return fmt.Errorf("hub: bucket %s: %w", hub.Bucket, err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, hub.SlotStreamConfig()); err != nil {
		return fmt.Errorf("hub: stream %s: %w", hub.SlotStream, err)
	}
	return nil
}

// Shutdown stops the hub and waits until it has.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// ensureStore creates dir (0700) when missing, refuses one others can use, and returns the
// token from dir/hub.token, made at first start. Errors: ErrUnsafeStore (wrapped) with the fix;
// the file system's, wrapped.
func ensureStore(dir string) (token, tokenFile string, err error) {
	if dir == "" {
		return "", "", errors.New("hub: no store directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("hub store: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", "", fmt.Errorf("hub store: %w", err)
	}
	if !fi.IsDir() {
		return "", "", fmt.Errorf("hub store %s is not a directory", dir)
	}
	if private(fi) != nil {
		return "", "", fmt.Errorf("%w: %s is mode %04o: chmod 700 %s", ErrUnsafeStore, dir, fi.Mode().Perm(), dir)
	}
	tokenFile = filepath.Join(dir, TokenFile)
	data, tfi, err := atomicfile.Read(tokenFile, 4096)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		buf := make([]byte, 32)
		if _, err := rand.Read(buf); err != nil {
			return "", "", fmt.Errorf("hub token: %w", err)
		}
		token = hex.EncodeToString(buf)
		if err := atomicfile.Write(tokenFile, []byte(token+"\n"), 0o600); err != nil {
			return "", "", fmt.Errorf("hub token: %w", err)
		}
		return token, tokenFile, nil
	case err != nil:
		return "", "", fmt.Errorf("hub token %s: %w", tokenFile, err)
	}
	if err := private(tfi); err != nil {
		return "", "", fmt.Errorf("%w: %s is mode %04o: chmod 600 %s", ErrUnsafeStore, tokenFile, tfi.Mode().Perm(), tokenFile)
	}
	token, _, _ = strings.Cut(string(data), "\n")
	if token = strings.TrimSpace(token); token == "" {
		return "", "", fmt.Errorf("hub token %s is empty: remove it and start the hub again to make a new one (then copy it to every device)", tokenFile)
	}
	return token, tokenFile, nil
}

// slogLogger passes the NATS server's log lines to slog.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Noticef(format string, v ...any) {
	s.l.Info(fmt.Sprintf(format, v...), "from", "nats")
}
func (s slogLogger) Warnf(format string, v ...any) {
	s.l.Warn(fmt.Sprintf(format, v...), "from", "nats")
}
func (s slogLogger) Fatalf(format string, v ...any) {
	s.l.Error(fmt.Sprintf(format, v...), "from", "nats")
}
func (s slogLogger) Errorf(format string, v ...any) {
	s.l.Error(fmt.Sprintf(format, v...), "from", "nats")
}
func (s slogLogger) Debugf(format string, v ...any) {
	s.l.Debug(fmt.Sprintf(format, v...), "from", "nats")
}
func (s slogLogger) Tracef(format string, v ...any) {
	s.l.Debug(fmt.Sprintf(format, v...), "from", "nats")
}
