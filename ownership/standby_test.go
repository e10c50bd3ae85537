//go:build linux

package ownership

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// holdGuard locks dir/owner.lock through its own open file description, as another process
// would, and returns the lock.
func holdGuard(t *testing.T, dir string) *flock.Flock {
	t.Helper()
	fl := flock.New(filepath.Join(dir, lockName), flock.SetPermissions(0o600))
	if ok, err := fl.TryLock(); err != nil || !ok {
		t.Fatalf("hold the guard: %v %v", ok, err)
	}
	return fl
}

// A standby cancelled while blocked on the guard returns at once; its blocked lock, taken when
// the holder lets go, is let go at once too, so the guard is free for the next process.
func TestCancelledStandbyLetsTheGuardGo(t *testing.T) {
	dir := testDir(t)
	holder := holdGuard(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		h, err := Wait(ctx, Options{Dir: dir})
		if h != nil {
			_ = h.Release(context.Background())
		}
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond) // blocked in flock(2) by now
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Wait did not return within 2 s of its cancel")
	}
	if err := holder.Unlock(); err != nil {
		t.Fatal(err)
	}
	// The kernel hands the lock to the blocked flock(2); only then may the probe try, or it
	// could win the lock first and prove nothing.
	time.Sleep(200 * time.Millisecond)
	probe := flock.New(filepath.Join(dir, lockName))
	eventually(t, 2*time.Second, "the guard free after the cancelled standby's lock", func() bool {
		ok, err := probe.TryLock()
		return err == nil && ok
	})
	_ = probe.Unlock()
}

// A standby blocked on an owner.lock that is replaced meanwhile (renamed away, a new file in its
// place) wakes up holding the old file, which guards nothing: it must lock the new one.
// Otherwise another process locking the new file would own at the same time.
func TestStandbyLocksTheGuardThatIsOnDisk(t *testing.T) {
	dir := testDir(t)
	path := filepath.Join(dir, lockName)
	holder := holdGuard(t, dir)
	got := make(chan *Handle, 1)
	go func() {
		h, err := Wait(context.Background(), Options{Dir: dir, HeartbeatInterval: time.Hour})
		if err != nil {
			t.Error(err)
		}
		got <- h
	}()
	time.Sleep(100 * time.Millisecond)
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := holder.Unlock(); err != nil {
		t.Fatal(err)
	}
	var h *Handle
	select {
	case h = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the standby did not own within 5 s of the holder letting go")
	}
	if h == nil {
		t.FailNow()
	}
	defer func() { _ = h.Release(context.Background()) }()
	other := flock.New(path)
	if ok, err := other.TryLock(); err != nil || ok {
		_ = other.Unlock()
		t.Fatalf("owner.lock on disk lockable by another (%v, %v) while the standby owns: it locked the replaced file", ok, err)
	}
}
