package hub

import "context"

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
