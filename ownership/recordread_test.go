//go:build linux || windows

package ownership

import (
	"fmt"
	"testing"
	"time"
)

// An observer always finds the record of a live owner, however often the owner replaces it: on
// Windows an open racing the heartbeat's rename fails with a sharing violation, which a reader
// must wait out rather than take for "no record" (readStateBytes).
func TestRecordReadableWhileOwnerHeartbeats(t *testing.T) {
	dir := testDir(t)
	owner := startHelper(t, "contender", dir, fmt.Sprintf("%s=%d", envInterval, 5))
	owner.send("acquire")
	_, _, _, token := parseOwned(t, owner.expect("owned", long))
	eventually(t, long, "owner record written", func() bool {
		r, _ := readRecord(dir)
		return r != nil && r.Token == token
	})
	for end, looks := time.Now().Add(3*time.Second), 0; time.Now().Before(end); looks++ {
		r, err := readRecord(dir)
		if err != nil || r == nil || r.Token != token {
			t.Fatalf("look %d at a heartbeating owner's record: %+v, %v", looks, r, err)
		}
	}
}
