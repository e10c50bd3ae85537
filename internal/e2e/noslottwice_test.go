//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An every-1s routine appends $ROUTINELY_SLOT to a file while its owner is SIGKILLed and
// replaced by a standby three times in 20 s: no slot appears twice.
func TestNoSlotTwiceAcrossThreeCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("20 s chaos run")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "slots.txt")
	home := newHome(t, fmt.Sprintf(`
[[routine]]
name = "tick"
every = "1s"
shell = 'echo "$ROUTINELY_SLOT" >> %q'
timeout = "5s"
`, out))

	owner := start(t, home, "daemon")
	waitOwner(t, home, owner.pid())
	for i := 0; i < 3; i++ {
		time.Sleep(5 * time.Second)
		standby := start(t, home, "daemon", "--wait")
		standby.waitStderr("Standing by", ownDeadline)
		owner.signal(syscall.SIGKILL)
		owner.wait(cmdTimeout)
		owner = standby
		waitOwner(t, home, owner.pid())
	}
	time.Sleep(5 * time.Second)
	owner.signal(syscall.SIGTERM)
	if code := owner.wait(cmdTimeout); code != 0 {
		t.Fatalf("last owner: exit %d on SIGTERM", code)
	}

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	lines := strings.Fields(string(data))
	for _, slot := range lines {
		seen[slot]++
	}
	for slot, n := range seen {
		if n > 1 {
			t.Errorf("slot %s ran %d times", slot, n)
		}
	}
	// About 20 s of owning at one slot a second: a routine that barely ran proves nothing.
	if len(lines) < 10 {
		t.Fatalf("only %d runs recorded in %s: %q", len(lines), out, data)
	}
	t.Logf("%d distinct slots, none twice", len(seen))
}
