package hubserver

import (
	"crypto/subtle"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/internal/atomicfile"
)

// DevicesDir is the directory of the store that holds each device's credentials, NAME.creds,
// written by `routinely hub add-device` and removed by `remove-device`.
const DevicesDir = "devices"

// maxCredsBytes bounds reading a credentials file.
const maxCredsBytes = 16 << 10

// auth decides who may connect (server.Authentication): a device whose key the store's
// devices/ lists, proving it by signing the connection's nonce, with devicePermissions; or the
// hub's token, with every permission (devices without credentials, and the hub itself). The
// directory is read at each connection, so add-device and remove-device take effect at the
// device's next connection without a restart.
type auth struct {
	token  string
	store  string
	hubKey string // the hub's public key: a credentials file it did not sign is not a device
}

// Check implements server.Authentication.
func (a auth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	if o.Nkey != "" {
		d := a.device(o.Nkey)
		if d == nil || !verifyNonce(o.Nkey, c.GetNonce(), o.Sig) {
			return false
		}
		c.RegisterUser(&server.User{Username: "device " + d.Name, Permissions: devicePermissions(d.ID)})
		return true
	}
	if o.Token != "" && subtle.ConstantTimeCompare([]byte(o.Token), []byte(a.token)) == 1 {
		c.RegisterUser(&server.User{Username: "token"})
		return true
	}
	return false
}

// device returns the credentials in the store's devices/ whose key is pub, nil when none.
func (a auth) device(pub string) *hub.Creds {
	dir := filepath.Join(a.store, DevicesDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".creds") {
			continue
		}
		data, _, err := atomicfile.Read(filepath.Join(dir, e.Name()), maxCredsBytes)
		if err != nil {
			continue
		}
		c, err := hub.ParseCreds(data)
		if err == nil && c.Hub == a.hubKey && c.Public() == pub {
			return c
		}
	}
	return nil
}

// verifyNonce reports whether sig (base64 URL, as nats.go sends it) is pub's signature over
// nonce.
func verifyNonce(pub string, nonce []byte, sig string) bool {
	raw, err := decodeSig(sig)
	if err != nil {
		return false
	}
	kp, err := nkeys.FromPublicKey(pub)
	return err == nil && kp.Verify(nonce, raw) == nil
}

// devicePermissions are what a device with credentials may do: use the bucket's claim, run
// and anchor keys and its own liveness key device.<id>, read the bucket and watch it; not
// write another device's liveness key, nor create, change, purge or delete the stream.
func devicePermissions(id string) *server.Permissions {
	kv := "$KV." + hub.Bucket + "."
	stream := "KV_" + hub.Bucket
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			kv + "claim.>", kv + "run.>", kv + "anchor.>", kv + "device." + id,
			"$JS.API.INFO",
			"$JS.API.STREAM.INFO." + stream,
			"$JS.API.STREAM.MSG.GET." + stream,
			"$JS.API.DIRECT.GET." + stream + ".>",
			"$JS.API.CONSUMER.CREATE." + stream + ".>",
			"$JS.API.CONSUMER.CREATE." + stream,
			"$JS.API.CONSUMER.DELETE." + stream + ".>",
			"$JS.API.CONSUMER.INFO." + stream + ".>",
			"$JS.FC." + stream + ".>",
			"$JS.ACK." + stream + ".>",
			// The slot register: record a claim, read one; never delete, purge or change it.
			"routinely.slot.>",
			"$JS.API.STREAM.INFO." + hub.SlotStream,
			"$JS.API.STREAM.MSG.GET." + hub.SlotStream,
			"$JS.API.DIRECT.GET." + hub.SlotStream + ".>",
			"$JS.API.DIRECT.GET." + hub.SlotStream,
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}
}

// decodeSig decodes a nonce signature as nats.go encodes it (base64, URL alphabet, no padding),
// or with the standard alphabet as other clients may.
func decodeSig(sig string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(sig)
	}
	return raw, err
}
