package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/routinely/routinely/internal/atomicfile"
	"github.com/routinely/routinely/internal/redact"
)

// Hub is the [hub] table of routines.toml: the NATS JetStream server through which this
// device's owner shares its routines with the owners of other devices (docs/design.md#9-devices).
type Hub struct {
	URL   string // nats://host:port
	Token string // the token as written (`token`), or "" when it comes from TokenFile
	// TokenFile is `token_file`, with "~" expanded and relative to routines.toml's directory,
	// which it must be inside (secretInside).
	TokenFile string
	Device    string // this device's name on the hub: `device`, or the host name
	// CAFile is `ca_file`, with "~" expanded and relative to routines.toml's directory, which it
	// must be inside as TokenFile: the PEM certificate(s) a hub's TLS certificate must chain to
	// (ReadCA); "" for the system's roots.
	CAFile string
	// CredentialsFile is `credentials_file`, with "~" expanded and relative to routines.toml's
	// directory, which it must be inside as TokenFile: this device's credentials on the hub
	// (`routinely hub add-device` writes them), with which it signs its claims and trusts only
	// claims signed by the hub's devices (ReadCredentials); "" for none.
	CredentialsFile string
	// Offline is OfflineClosed (run nothing shared while the hub cannot be reached) or
	// OfflineLocal (run every routine on this device alone meanwhile, at the risk of a slot
	// running here and on another device).
	Offline string
	// LivenessTTL is how long the hub keeps this device's liveness key after its last refresh;
	// the other devices take over its routines once it has expired.
	LivenessTTL time.Duration

	Line, Col int // where the [hub] header is

	dir string // routines.toml's directory, absolute: the one place a secret file is read from
}

// Offline policies ([hub] offline).
const (
	OfflineClosed = "closed"
	OfflineLocal  = "local"
)

// Hub bounds.
const (
	DefaultLivenessTTL = 5 * time.Second
	MinLivenessTTL     = 2 * time.Second
	MaxLivenessTTL     = 10 * time.Minute
	maxTokenBytes      = 4096
)

var (
	hubKeys = map[string]bool{"url": true, "token": true, "token_file": true, "device": true, "offline": true, "liveness_ttl": true, "ca_file": true, "credentials_file": true}
)

// maxDeviceName is the longest device name: it is part of hub keys.
const maxDeviceName = 64

// deviceByte reports whether c may appear in a device name (a hub key allows A-Z a-z 0-9 _ -).
// A function rather than a regexp: `[…]{1,64}` compiles to 64 copies at every start of every
// command (about 1 ms here).
func deviceByte(c rune) bool {
	return c == '_' || c == '-' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// ValidDeviceName reports whether name is 1 to maxDeviceName device bytes.
func ValidDeviceName(name string) bool {
	if name == "" || len(name) > maxDeviceName {
		return false
	}
	for _, c := range name {
		if !deviceByte(c) {
			return false
		}
	}
	return true
}

// ErrNoHubToken is returned by Hub.ReadToken when the hub has neither a token nor a usable
// token file.
var ErrNoHubToken = errors.New("no hub token")

// hub validates the [hub] table val; nil (after recording problems) when it is unusable, so an
// invalid table never silently turns a shared set into a per-device one without a word.
func (v *validator) hub(val any) *Hub {
	tab, ok := val.(map[string]any)
	if !ok {
		v.problem("", "hub", "hub must be a table ([hub])")
		return nil
	}
	p := v.posOf("hub")
	h := &Hub{Offline: OfflineClosed, LivenessTTL: DefaultLivenessTTL, Line: p.Line, Col: p.Col}
	start := v.found
	for _, k := range sortedKeys(tab) {
		if !hubKeys[k] {
			v.problem("", "hub."+k, "unknown key %q in [hub] (want url, token or token_file, device, offline, liveness_ttl, ca_file, credentials_file)", k)
		}
	}
	str := func(k string) string {
		x, present := tab[k]
		if !present {
			return ""
		}
		s, isStr := x.(string)
		if !isStr {
			v.problem("", "hub."+k, "%s must be a string", k)
		}
		return s
	}
	h.URL = str("url")
	switch {
	case h.URL == "":
		v.problem("", "hub", "[hub] needs url = \"nats://HOST:4222\" (what `routinely hub` prints)")
	case !strings.HasPrefix(h.URL, "nats://") && !strings.HasPrefix(h.URL, "tls://"):
		v.problem("", "hub.url", "url %q must start with nats:// or tls://", redact.URL(h.URL))
	case !hubURLParses(h.URL):
		v.problem("", "hub.url", "url %q is not nats://HOST:PORT (a '#', '/', '?' or '@' in a user name or password is written %%23, %%2F, %%3F, %%40; a token goes in token_file)", redact.URL(h.URL))
	}
	h.Token, h.TokenFile = str("token"), str("token_file")
	creds := str("credentials_file")
	switch {
	case h.Token != "" && h.TokenFile != "":
		v.problem("", "hub.token", "give token or token_file, not both")
	case h.Token == "" && h.TokenFile == "" && creds == "":
		v.problem("", "hub", "[hub] needs credentials_file = \"NAME.creds\" (the file `routinely hub add-device NAME` wrote), or token_file = \"…/hub.token\" (the file `routinely hub` wrote) or token = \"…\"")
	case h.TokenFile != "":
		h.dir, h.TokenFile = v.secretFile(h.TokenFile, "hub.token_file", "token_file", "hub.token")
	}
	if h.CAFile = str("ca_file"); h.CAFile != "" {
		h.dir, h.CAFile = v.secretFile(h.CAFile, "hub.ca_file", "ca_file", "hub.crt")
	}
	if h.CredentialsFile = creds; h.CredentialsFile != "" {
		h.dir, h.CredentialsFile = v.secretFile(h.CredentialsFile, "hub.credentials_file", "credentials_file", "device.creds")
	}
	if _, present := tab["device"]; present {
		h.Device = str("device")
		if !ValidDeviceName(h.Device) {
			v.problem("", "hub.device", "device %q must be 1 to 64 of A-Z a-z 0-9 _ -", h.Device)
		}
	} else {
		h.Device = DeviceName()
	}
	if _, present := tab["offline"]; present {
		switch o := str("offline"); o {
		case OfflineClosed, OfflineLocal:
			h.Offline = o
		default:
			v.problem("", "hub.offline", "offline %q must be %q (run nothing shared without the hub, the default) or %q (run alone, at the risk of double runs)", o, OfflineClosed, OfflineLocal)
		}
	}
	if s := str("liveness_ttl"); s != "" {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			v.problem("", "hub.liveness_ttl", "liveness_ttl: %q is not a duration like \"5s\"", s)
		case d < MinLivenessTTL || d > MaxLivenessTTL || d%time.Second != 0:
			v.problem("", "hub.liveness_ttl", "liveness_ttl %s must be whole seconds from %s to %s", s, MinLivenessTTL, MaxLivenessTTL)
		default:
			h.LivenessTTL = d
		}
	}
	if v.found > start {
		return nil
	}
	return h
}

// hubURLParses reports whether raw is a server URL as nats.go reads it: a host, and no path,
// query or fragment. A password with an unescaped '#' otherwise makes the rest of the URL a
// fragment, and the connection goes to a host named after the user.
func hubURLParses(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Host != "" && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" && !strings.Contains(raw, "#")
}

// DeviceName returns the default device name: the host name, cut to what a hub key allows
// (A-Z a-z 0-9 _ -, at most 64), or "device" when nothing of it is left.
func DeviceName() string {
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	var b strings.Builder
	for _, c := range host {
		if b.Len() == maxDeviceName {
			break
		}
		if deviceByte(c) {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "device"
	}
	return b.String()
}

// secretFile resolves the secret file path named at key (key path, e.g. "hub.token_file"; name,
// e.g. "token_file") as written: "~" expanded, relative to routines.toml's directory. It returns
// that directory (absolute) and the path, and records a problem when the path is not inside the
// directory (secretInside), saying to copy it there as base. A file read as a secret from
// anywhere would let routines.toml send any file of yours (~/.git-credentials) where its other
// keys say; a certificate trusted from anywhere would let whoever can change that file put a
// hub of theirs in the middle. ca_file follows the same rule.
func (v *validator) secretFile(path, key, name, base string) (dir, file string) {
	dir, err := filepath.Abs(filepath.Dir(v.file))
	if err != nil {
		dir = filepath.Dir(v.file)
	}
	file = expandHome(path)
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	if !secretInside(dir, file) {
		v.problem("", key, "%s %s is outside %s, the directory of routines.toml, the only place a secret file is read from; fix: copy it there (cp %s %s; chmod 600 %s) and set %s = %q",
			name, file, dir, file, filepath.Join(dir, base), filepath.Join(dir, base), name, base)
	}
	return dir, file
}

// secretInside is the rule for where a secret file may be: strictly inside dir (at any depth),
// judged on the paths as written (no ".." left after cleaning). ReadToken applies it again to
// the paths with their symbolic links resolved.
func secretInside(dir, file string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// ReadToken returns the hub token: Token, or the first line of TokenFile, a regular file (not a
// symbolic link or a FIFO, read without blocking, at most 4 KiB: atomicfile.Read) inside
// routines.toml's directory once symbolic links are resolved, owned by you (or root) and that
// others can neither read nor write. Errors: ErrNoHubToken wrapped with what is wrong and what
// to do (missing, unreadable, elsewhere, not a regular file, another user's, shared with
// others, too large, empty).
func (h *Hub) ReadToken() (string, error) {
	if h.Token != "" {
		return h.Token, nil
	}
	if h.TokenFile == "" {
		return "", fmt.Errorf("%w: [hub] has neither token nor token_file", ErrNoHubToken)
	}
	if err := h.secretInPlace(h.TokenFile, "token_file", "hub.token"); err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoHubToken, err)
	}
	data, fi, err := atomicfile.Read(h.TokenFile, maxTokenBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: token_file %s: %w (copy the hub.token that `routinely hub` wrote)", ErrNoHubToken, h.TokenFile, err)
	case errors.Is(err, atomicfile.ErrNotRegular):
		return "", fmt.Errorf("%w: token_file %w; put a copy of hub.token there (not a link to one)", ErrNoHubToken, err)
	case err != nil:
		return "", fmt.Errorf("%w: token_file %s: %w", ErrNoHubToken, h.TokenFile, err)
	}
	if why := tokenUnsafe(fi); why != "" {
		return "", fmt.Errorf("%w: token_file %s %s", ErrNoHubToken, h.TokenFile, why)
	}
	tok, _, _ := strings.Cut(string(data), "\n")
	if tok = strings.TrimSpace(tok); tok == "" {
		return "", fmt.Errorf("%w: token_file %s is empty", ErrNoHubToken, h.TokenFile)
	}
	return tok, nil
}

// secretInPlace applies secretInside to file's directory and routines.toml's (h.dir), both with
// their symbolic links resolved, so that a link on the way cannot lead the read elsewhere (the
// file itself is never followed: atomicfile.Read). name is the key ("token_file") and base what
// to copy there ("hub.token"), for the message. Errors: one saying where file leads and where
// to put it (the caller wraps its sentinel); a missing directory is left to the read to report.
func (h *Hub) secretInPlace(file, name, base string) error {
	dir, err := filepath.EvalSymlinks(h.dir)
	if err != nil {
		dir = h.dir
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(file))
	if err != nil {
		return nil
	}
	if parent != dir && !secretInside(dir, parent) {
		return fmt.Errorf("%s %s leads to %s, outside %s (the directory of routines.toml); copy %s into %s itself", name, file, filepath.Join(parent, filepath.Base(file)), h.dir, base, h.dir)
	}
	return nil
}

// DefinitionHash returns a digest (hex SHA-256) of what r does and when: its schedule, zone,
// action and the keys that shape a run. Two devices sharing a routine under one name compare
// it, so a routine defined differently on two devices is reported (docs/design.md#9-devices)
// rather than run under two definitions. Keys that only concern this device's records
// (keep_runs, auto_pause_after, notify_on, shared) are left out, as are `paused` (a pause is a
// per-device choice) and the every-anchor (shared through the hub).
func DefinitionHash(r *Routine) string {
	def := struct {
		Kind, Cron, Timezone, Overlap, CatchUp, Action, Dir string
		Every, Jitter, Timeout, CatchUpWindow               time.Duration
		At                                                  []string
		Days                                                []time.Weekday
		Spec                                                any
		Env                                                 map[string]string
		Retries                                             int
	}{r.Kind, r.Cron, r.Timezone, r.Overlap, r.CatchUp, r.Action, r.Dir,
		r.Every, r.Jitter, r.Timeout, r.CatchUpWindow, r.At, r.Days, r.Spec, r.Env, r.Retries}
	data, err := json.Marshal(def) // maps marshal with sorted keys: the digest is stable
	if err != nil {
		data = fmt.Appendf(nil, "%#v", def)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
