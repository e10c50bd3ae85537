package hub

import (
	"context"
	"encoding/json"
	"time"
)

// Crash ends the client as a killed process would: the connection drops, nothing is deleted
// or released, so its liveness key lives until its TTL runs out.
func (c *Client) Crash() {
	c.mu.Lock()
	stop, nc := c.stop, c.nc
	c.stop = nil
	c.mu.Unlock()
	if stop != nil {
		close(stop)
		<-c.done
	}
	nc.Close()
}

// LivenessRev returns the revision of this device's first liveness key published on its current
// connection to the hub, 0 before there is one.
func (c *Client) LivenessRev() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live != c.conn {
		return 0
	}
	return c.liveRev
}

// NoteTimeout notes the hub unreachable as a request that timed out does, the connection up.
func (c *Client) NoteTimeout() {
	_ = c.unreachable(context.DeadlineExceeded)
}

// SignedHolder returns a claim or run value for slot of routine, as the device of c with
// journal would write it, signed with c.
func SignedHolder(c *Creds, routine, journal string, slot time.Time) []byte {
	h := holder{Device: c.ID, Name: c.Name, Journal: journal, Epoch: 1, Slot: slot.UTC(), At: time.Now().UTC()}
	c.sign(routine, &h)
	data, _ := json.Marshal(h)
	return data
}
