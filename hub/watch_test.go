package hub

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// entry is one key as a watcher delivers it.
type entry struct {
	key string
	op  jetstream.KeyValueOp
}

func (e entry) Bucket() string                  { return Bucket }
func (e entry) Key() string                     { return e.key }
func (e entry) Value() []byte                   { return []byte(`{}`) }
func (e entry) Revision() uint64                { return 1 }
func (e entry) Created() time.Time              { return time.Time{} }
func (e entry) Delta() uint64                   { return 0 }
func (e entry) Operation() jetstream.KeyValueOp { return e.op }

// Through a new watch (after a reconnect) every device keeps its liveness as last seen until the
// watcher has delivered the keys as they are; then a device whose key was not among them (gone
// from the hub with no deletion marker left to deliver) is gone, and the others are as delivered.
func TestANewWatchSettlesTheDevicesItDidNotDeliver(t *testing.T) {
	c := New(Options{Device: "laptop"})
	for _, name := range []string{"desktop", "studio", "attic"} {
		c.devices[name] = &seenDevice{alive: true}
	}
	c.delivered = map[string]bool{} // as ensureWatch leaves it for a new watcher
	c.apply(entry{key: "device.studio", op: jetstream.KeyValuePut})
	c.apply(entry{key: "device.attic", op: jetstream.KeyValueDelete})
	if !c.devices["desktop"].alive || c.ready {
		t.Fatalf("before the watcher's first delivery ended: desktop alive %t, ready %t; want alive, not ready",
			c.devices["desktop"].alive, c.ready)
	}
	c.apply(nil) // the keys as they were have all been delivered
	if got := map[string]bool{"desktop": c.devices["desktop"].alive, "studio": c.devices["studio"].alive,
		"attic": c.devices["attic"].alive}; got["desktop"] || !got["studio"] || got["attic"] || !c.ready {
		t.Fatalf("after the first delivery: alive %v, ready %t; want only studio alive, ready", got, c.ready)
	}
}
