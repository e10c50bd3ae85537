package hub

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nkeys"

	"github.com/routinely/routinely/internal/atomicfile"
)

// HubKeyFile is the file in the hub's store that holds the hub's signing key (an nkeys account
// seed, 0600): it signs each device's credentials (MakeCreds), and a device trusts a claim only
// when it is signed by a device whose credentials it signed
// (docs/design.md#98-signed-claims-and-the-trust-model).
const HubKeyFile = "hub.nk"

// maxKeyBytes bounds reading a key or credentials file.
const maxKeyBytes = 16 << 10

// Creds are one device's credentials on a hub: the hub's public key (which every credentials
// file of that hub names), the device's name as the hub gave it, the device's own key pair (an
// nkeys user key) and the hub's signature over the name and the device's public key. They are
// made by `routinely hub add-device` (MakeCreds) and read by the device from [hub]
// credentials_file (ParseCreds).
type Creds struct {
	Hub  string // the hub's public key (nkeys account key, "A…")
	Name string // the device's name, as the hub signed it
	// ID is the device's id on the hub (a UUID made by add-device): with credentials, the
	// device's liveness key is device.<ID>, the one key of its kind the hub lets it write.
	ID   string
	Cert string // the hub's signature (base64) over certContent(Name, the device's public key)
	key  nkeys.KeyPair
}

// credsFile is the JSON form of a credentials file.
type credsFile struct {
	Hub  string `json:"hub"`
	Name string `json:"name"`
	ID   string `json:"id"`
	Seed string `json:"seed"`
	Cert string `json:"cert"`
}

// Public is the device's public key ("U…").
func (c *Creds) Public() string {
	p, _ := c.key.PublicKey() // a parsed user key always has one
	return p
}

// certContent is what the hub signs for a device: its name and its public key.
func certContent(name, pub string) []byte {
	return []byte("routinely device\n" + name + "\n" + pub)
}

// SignNonce signs the nonce a NATS server sends, proving to the hub that this is the device
// (nats.Nkey). Errors: the key library's.
func (c *Creds) SignNonce(nonce []byte) ([]byte, error) { return c.key.Sign(nonce) }

// LoadHubKey returns the hub's signing key kept in store's HubKeyFile, creating it (a new
// nkeys account key, 0600, written atomically) when there is none. Errors: ErrCreds (wrapped)
// when the file is there but is not a regular file, too large or not an account seed; the file
// system's, wrapped.
func LoadHubKey(store string) (nkeys.KeyPair, error) {
	path := filepath.Join(store, HubKeyFile)
	data, _, err := atomicfile.Read(path, maxKeyBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		kp, err := nkeys.CreateAccount()
		if err != nil {
			return nil, fmt.Errorf("hub key: %w", err)
		}
		seed, _ := kp.Seed()
		if err := atomicfile.Write(path, append(seed, '\n'), 0o600); err != nil {
			return nil, fmt.Errorf("hub key: %w", err)
		}
		return kp, nil
	case err != nil:
		return nil, fmt.Errorf("%w: hub key %s: %w", ErrCreds, path, err)
	}
	kp, err := nkeys.FromSeed([]byte(trimLine(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: hub key %s: %w", ErrCreds, path, err)
	}
	if pub, _ := kp.PublicKey(); !nkeys.IsValidPublicAccountKey(pub) {
		return nil, fmt.Errorf("%w: hub key %s is not an account key", ErrCreds, path)
	}
	return kp, nil
}

// MakeCreds makes credentials for a device called name: a new device key pair, signed by
// hubKey. It returns the credentials file's content (JSON; secret: it holds the device's
// seed). Errors: the key library's, wrapped.
func MakeCreds(hubKey nkeys.KeyPair, name string) ([]byte, error) {
	dev, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("device key: %w", err)
	}
	pub, _ := dev.PublicKey()
	seed, _ := dev.Seed()
	hubPub, err := hubKey.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("hub key: %w", err)
	}
	sig, err := hubKey.Sign(certContent(name, pub))
	if err != nil {
		return nil, fmt.Errorf("sign device: %w", err)
	}
	data, _ := json.MarshalIndent(credsFile{Hub: hubPub, Name: name, ID: uuid.NewString(), Seed: string(seed),
		Cert: base64.RawStdEncoding.EncodeToString(sig)}, "", "  ")
	return append(data, '\n'), nil
}

// ParseCreds parses a credentials file's content (MakeCreds). Errors: ErrCreds (wrapped, saying
// what is wrong) when it is not JSON of that form, the hub key is not an account key, the seed
// not a user seed, or the hub's signature does not verify.
func ParseCreds(data []byte) (*Creds, error) {
	var f credsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCreds, err)
	}
	if !nkeys.IsValidPublicAccountKey(f.Hub) {
		return nil, fmt.Errorf("%w: %q is not a hub key", ErrCreds, f.Hub)
	}
	kp, err := nkeys.FromSeed([]byte(f.Seed))
	if err != nil {
		return nil, fmt.Errorf("%w: seed: %w", ErrCreds, err)
	}
	pub, _ := kp.PublicKey()
	if !nkeys.IsValidPublicUserKey(pub) {
		return nil, fmt.Errorf("%w: the seed is not a device (user) key", ErrCreds)
	}
	if u, err := uuid.Parse(f.ID); err != nil || u.String() != f.ID {
		return nil, fmt.Errorf("%w: %q is not a device id", ErrCreds, f.ID)
	}
	c := &Creds{Hub: f.Hub, Name: f.Name, ID: f.ID, Cert: f.Cert, key: kp}
	if !verify(f.Hub, certContent(f.Name, pub), f.Cert) {
		return nil, fmt.Errorf("%w: the hub's signature over device %q does not verify", ErrCreds, f.Name)
	}
	return c, nil
}

// verify reports whether sig (base64) is pub's signature over data.
func verify(pub string, data []byte, sig string) bool {
	raw, err := base64.RawStdEncoding.DecodeString(sig)
	if err != nil {
		return false
	}
	kp, err := nkeys.FromPublicKey(pub)
	return err == nil && kp.Verify(data, raw) == nil
}

func trimLine(data []byte) string {
	s := string(data)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}

// signed is what a device signs in a holder: every field that says who holds which slot.
type signed struct {
	Routine string    `json:"routine"`
	Device  string    `json:"device"`
	Name    string    `json:"name"`
	Journal string    `json:"journal"`
	Epoch   uint64    `json:"epoch"`
	Slot    time.Time `json:"slot"`
	Key     string    `json:"key"`
}

// holderContent is the canonical content of h for routine, which its device signs.
func holderContent(routine string, h holder) []byte {
	data, _ := json.Marshal(signed{Routine: routine, Device: h.Device, Name: h.Name, Journal: h.Journal,
		Epoch: h.Epoch, Slot: h.Slot.UTC(), Key: h.Key})
	return append([]byte("routinely claim\n"), data...)
}

// sign fills h's key, certificate and signature for routine with c's key.
func (c *Creds) sign(routine string, h *holder) {
	h.Key, h.Cert = c.Public(), c.Cert
	sig, err := c.key.Sign(holderContent(routine, *h))
	if err == nil {
		h.Sig = base64.RawStdEncoding.EncodeToString(sig)
	}
}

// untrusted returns why a holder of routine read from the hub (at the claim key of slot; zero:
// a run key) is not trusted by a device whose credentials are c, "" when it is: unsigned (a
// device without credentials, of a version before them, or a forgery), a key the hub did not
// sign under that name, a signature that does not verify, or another slot's claim copied here.
// A holder is trusted only when signed by a device key that this device's hub signed.
func (c *Creds) untrusted(routine string, slot time.Time, h holder) string {
	switch {
	case h.Sig == "" || h.Key == "":
		return "unsigned"
	case !verify(c.Hub, certContent(h.Name, h.Key), h.Cert):
		return "its device key is not one the hub signed for device " + fmt.Sprintf("%q", h.Name)
	case !verify(h.Key, holderContent(routine, h), h.Sig):
		return "its signature does not verify"
	case !slot.IsZero() && !h.Slot.Equal(slot):
		return "it is the claim of another slot (" + h.Slot.UTC().Format(time.RFC3339) + "), copied here"
	}
	return ""
}
