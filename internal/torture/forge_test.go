//go:build linux

package torture

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// forgery is what one forging client wrote to the hub: the future slots (unix seconds) it
// put a forged claim on, and how many run keys it forged and claim keys it deleted.
type forgery struct {
	slots   []int64
	runs    int
	deleted int
}

// forgeHolder is the shape of a claim or run value (hub.holder in hub/client.go), written here
// by hand as an attacker would.
type forgeHolder struct {
	Device  string    `json:"device"`
	Name    string    `json:"name,omitempty"`
	Journal string    `json:"journal"`
	Epoch   uint64    `json:"epoch"`
	Slot    time.Time `json:"slot"`
	At      time.Time `json:"at"`
	Key     string    `json:"key,omitempty"`
	Cert    string    `json:"cert,omitempty"`
	Sig     string    `json:"sig,omitempty"`
}

// signUnknown signs h as a device of another hub would: a fresh device key, certified by a
// fresh hub key that no device trusts, over the content hub.holderContent signs (hub/creds.go).
func signUnknown(routine string, h *forgeHolder) error {
	user, err := nkeys.CreateUser()
	if err != nil {
		return err
	}
	account, err := nkeys.CreateAccount()
	if err != nil {
		return err
	}
	pub, err := user.PublicKey()
	if err != nil {
		return err
	}
	cert, err := account.Sign([]byte("routinely device\n" + h.Name + "\n" + pub))
	if err != nil {
		return err
	}
	content, _ := json.Marshal(struct {
		Routine string    `json:"routine"`
		Device  string    `json:"device"`
		Name    string    `json:"name"`
		Journal string    `json:"journal"`
		Epoch   uint64    `json:"epoch"`
		Slot    time.Time `json:"slot"`
		Key     string    `json:"key"`
	}{routine, h.Device, h.Name, h.Journal, h.Epoch, h.Slot.UTC(), pub})
	sig, err := user.Sign(append([]byte("routinely claim\n"), content...))
	if err != nil {
		return err
	}
	h.Key = pub
	h.Cert = base64.RawStdEncoding.EncodeToString(cert)
	h.Sig = base64.RawStdEncoding.EncodeToString(sig)
	return nil
}

// forge is the attack of a holder of the hub's token (a raw client, no device's credentials)
// on routine, whose slots are whole seconds: for the next 2–5 s it writes forged claims naming
// a live device (its id, name, journal and epoch read from its liveness key), alternately
// unsigned and signed by a key of an unknown hub; it forges the run key for the coming slot;
// and it deletes up to 3 claim keys of slots that already ran. Devices with credentials must
// ignore the forgeries (docs/design.md §9.8), and the slot register keeps a deleted claim from
// running its slot again. Errors: the hub's (it may be restarting), reported and not fatal.
func forge(url, token, routine string, rng *rand.Rand) (forgery, error) {
	var f forgery
	nc, err := nats.Connect(url, nats.Token(token), nats.Timeout(2*time.Second), nats.NoReconnect())
	if err != nil {
		return f, fmt.Errorf("connect: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return f, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, "routinely")
	if err != nil {
		return f, fmt.Errorf("bucket: %w", err)
	}
	victim := forgeHolder{Device: "nobody", Name: "nobody", Journal: "nobody"}
	var pastClaims []string
	var devices [][]byte
	now := time.Now()
	if lister, err := kv.ListKeys(ctx); err == nil {
		for k := range lister.Keys() {
			switch {
			case strings.HasPrefix(k, "device."):
				if e, err := kv.Get(ctx, k); err == nil {
					devices = append(devices, e.Value())
				}
			case strings.HasPrefix(k, "claim."+routine+"."):
				ns, err := strconv.ParseInt(strings.TrimPrefix(k, "claim."+routine+"."), 10, 64)
				if err == nil && time.Unix(0, ns).Before(now.Add(-time.Second)) {
					pastClaims = append(pastClaims, k)
				}
			}
		}
	}
	if len(devices) > 0 {
		_ = json.Unmarshal(devices[rng.Intn(len(devices))], &victim)
	}
	next := now.Truncate(time.Second).Add(time.Second)
	put := func(key string, slot time.Time, sign bool) error {
		h := forgeHolder{Device: victim.Device, Name: victim.Name, Journal: victim.Journal,
			Epoch: victim.Epoch, Slot: slot.UTC(), At: time.Now().UTC()}
		if sign {
			if err := signUnknown(routine, &h); err != nil {
				return err
			}
		}
		v, _ := json.Marshal(h)
		_, err := kv.Put(ctx, key, v)
		return err
	}
	for i := 1; i <= 4; i++ { // the slots from 2 s ahead: the next may be under way
		slot := next.Add(time.Duration(i) * time.Second)
		if err := put("claim."+routine+"."+strconv.FormatInt(slot.UnixNano(), 10), slot, i%2 == 0); err != nil {
			return f, fmt.Errorf("forge claim: %w", err)
		}
		f.slots = append(f.slots, slot.Unix())
	}
	if err := put("run."+routine, next, rng.Intn(2) == 0); err != nil {
		return f, fmt.Errorf("forge run: %w", err)
	}
	f.runs++
	rng.Shuffle(len(pastClaims), func(i, j int) { pastClaims[i], pastClaims[j] = pastClaims[j], pastClaims[i] })
	for _, k := range pastClaims[:min(3, len(pastClaims))] {
		if err := kv.Delete(ctx, k); err != nil {
			return f, fmt.Errorf("delete %s: %w", k, err)
		}
		f.deleted++
	}
	return f, nil
}
