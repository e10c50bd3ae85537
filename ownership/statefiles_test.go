//go:build linux

package ownership

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Files in the state directory are the owner's input: a named pipe, a symlink or a huge file
// there must never block, mislead or be written through.

// prompt is how long a look at a state file may take before it counts as blocked.
const prompt = 5 * time.Second

// within fails the test when f has not returned after prompt.
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(prompt):
		t.Fatalf("%s still blocked after %s", what, prompt)
		var zero T
		return zero
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	_ = os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Every reader of a state file returns at once on a FIFO and calls it garbage.
func TestStateFileReadsNeverBlockOnFIFO(t *testing.T) {
	dir := testDir(t)
	for _, name := range []string{recordName, requestName, replyName, epochName} {
		mkfifo(t, filepath.Join(dir, name))
	}
	if err := within(t, "readRecord", func() error { _, err := readRecord(dir); return err }); !errors.Is(err, errGarbage) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("owner.json FIFO: %v, want errGarbage naming a named pipe", err)
	}
	if err := within(t, "readRequest", func() error { _, err := readRequest(dir); return err }); !errors.Is(err, errGarbage) {
		t.Errorf("takeover.json FIFO: %v, want errGarbage", err)
	}
	if r := within(t, "readReply", func() *Reply { return readReply(dir) }); r != nil {
		t.Errorf("takeover.reply.json FIFO: %+v, want nil", r)
	}
	if err := within(t, "readEpochFile", func() error { _, err := readEpochFile(dir); return err }); !errors.Is(err, errGarbage) {
		t.Errorf("epoch FIFO: %v, want errGarbage", err)
	}
	within(t, "Inspect", func() error { _, err := Inspect(dir); return err })

	// A symlink in a state file's place is not followed, even to a valid file.
	valid := filepath.Join(t.TempDir(), "valid.json")
	if err := os.WriteFile(valid, []byte(`{"token":"t","pid":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(valid, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	var r Record
	if err := readJSON(dir, "link.json", &r); !errors.Is(err, errGarbage) || !strings.Contains(err.Error(), "symbolic link") || r.Token != "" {
		t.Errorf("symlinked state file: %v (read %+v), want errGarbage naming a symbolic link", err, r)
	}
}

// A 100 MB owner.json is garbage, and is not read whole to find out.
func TestHugeRecordIsGarbageNotReadWhole(t *testing.T) {
	dir := testDir(t)
	f, err := os.Create(filepath.Join(dir, recordName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"token":"t","pid":1,"command":["`); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil { // sparse: no 100 MB written to disk
		t.Fatal(err)
	}
	_ = f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = readRecord(dir)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errGarbage) {
		t.Fatalf("100 MB owner.json: %v, want errGarbage", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*maxStateFile+(4<<20) {
		t.Fatalf("reading a 100 MB owner.json allocated %d bytes; the read is not bounded by %d", alloc, maxStateFile)
	}
}

// A FIFO planted as takeover.json does not wedge the owner: it is removed, the owner keeps
// heartbeating and still releases promptly.
func TestOwnerSurvivesFIFORequest(t *testing.T) {
	dir := testDir(t)
	h, err := Acquire(context.Background(), Options{Dir: dir, HeartbeatInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(dir, requestName))
	eventually(t, long, "the owner to remove the FIFO takeover.json", func() bool {
		_, err := os.Lstat(filepath.Join(dir, requestName))
		return errors.Is(err, fs.ErrNotExist)
	})
	since := time.Now()
	eventually(t, long, "heartbeats after the FIFO", func() bool {
		r, _ := readRecord(dir)
		return r != nil && r.HeartbeatAt.After(since)
	})
	mkfifo(t, filepath.Join(dir, requestName)) // once more, right before the release
	if err := within(t, "Release", func() error { return h.Release(context.Background()) }); err != nil {
		t.Fatal(err)
	}
}

// The next owner is not frozen by FIFOs in place of owner.json, epoch and the reply, and the
// epoch still rises (here the journal's floor stands in for the unreadable epoch file).
func TestAcquireWithFIFOStateFiles(t *testing.T) {
	dir := testDir(t)
	first := acquireT(t, Options{Dir: dir})
	prev := first.Epoch()
	if err := first.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{recordName, epochName, replyName} {
		mkfifo(t, filepath.Join(dir, name))
	}
	h := within(t, "Acquire", func() *Handle {
		h, err := Acquire(context.Background(), Options{Dir: dir, EpochFloor: func() (uint64, error) { return prev, nil }})
		if err != nil {
			t.Error(err)
		}
		return h
	})
	if h == nil {
		t.FailNow()
	}
	t.Cleanup(func() { _ = h.Release(context.Background()) })
	if h.Epoch() != prev+1 {
		t.Fatalf("epoch %d, want %d", h.Epoch(), prev+1)
	}
	for _, name := range []string{recordName, epochName} {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s after acquiring: %v %v, want a regular file", name, fi.Mode(), err)
		}
	}
	if n, err := readEpochFile(dir); err != nil || n != h.Epoch() {
		t.Fatalf("epoch file %d %v, want %d", n, err, h.Epoch())
	}
}

// The epoch file is never written through a symlink or a hard link: the other file keeps its
// content, and the epoch file becomes a regular file of its own.
func TestEpochNotWrittenThroughLinks(t *testing.T) {
	for _, how := range []string{"symlink", "hardlink"} {
		t.Run(how, func(t *testing.T) {
			dir := testDir(t)
			victim := filepath.Join(t.TempDir(), "precious")
			const content = "do not truncate me\n"
			if err := os.WriteFile(victim, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			link := os.Symlink
			if how == "hardlink" {
				link = os.Link
				victim = filepath.Join(dir, "precious") // hard links stay on one filesystem
				if err := os.WriteFile(victim, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := link(victim, filepath.Join(dir, epochName)); err != nil {
				t.Fatal(err)
			}
			h := acquireT(t, Options{Dir: dir})
			if got, err := os.ReadFile(victim); err != nil || string(got) != content {
				t.Fatalf("the %s target now holds %q (%v)", how, got, err)
			}
			fi, err := os.Lstat(filepath.Join(dir, epochName))
			if err != nil || !fi.Mode().IsRegular() || linkCount(fi) != 1 {
				t.Fatalf("epoch after acquiring: %v links=%d %v, want a regular file of its own", fi.Mode(), linkCount(fi), err)
			}
			if n, err := readEpochFile(dir); err != nil || n != h.Epoch() {
				t.Fatalf("epoch file %d %v, want %d", n, err, h.Epoch())
			}
		})
	}
}

// An owner.lock that is not a regular file is refused at once, with what to do; Routinely never
// replaces it (two processes doing so could lock different files), never blocks on it and never
// creates a symlink's target.
func TestGuardFileNotRegularRefused(t *testing.T) {
	dir := testDir(t)
	lock := filepath.Join(dir, lockName)
	mkfifo(t, lock)
	err := within(t, "Acquire with a FIFO owner.lock", func() error {
		_, err := Acquire(context.Background(), Options{Dir: dir})
		return err
	})
	if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "rm "+lock) {
		t.Fatalf("FIFO owner.lock: %v, want ErrUnsafeDir with `rm %s`", err, lock)
	}
	if st := within(t, "Inspect", func() Status { st, _ := Inspect(dir); return st }); st.Held {
		t.Fatalf("a FIFO owner.lock reported held: %+v", st)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.lock")
	_ = os.Remove(lock)
	if err := os.Symlink(target, lock); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(context.Background(), Options{Dir: dir}); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("symlinked owner.lock: %v, want ErrUnsafeDir", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the symlink's target was created: %v", err)
	}
}

// A forged takeover request naming some live process of the same user (not a challenger) is
// approved, but the handover does not complete: the owner ends with ErrHandoverFailed after
// waiting handoverWait, not ErrReleased, so its user owns again, at a new epoch.
func TestForgedTakeoverDoesNotCompleteHandover(t *testing.T) {
	dir := testDir(t)
	h, err := Acquire(context.Background(), Options{Dir: dir, HeartbeatInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	forgeRequest(t, dir, h)
	eventually(t, long, "the owner to approve and let go", func() bool { return !h.Admitting() })
	released := time.Now()
	receive(t, h.Lost(), "the handle to end")
	if err := h.Err(); !errors.Is(err, ErrHandoverFailed) || !strings.Contains(err.Error(), "did not take the routines") {
		t.Fatalf("handle ended with %v, want ErrHandoverFailed", err)
	}
	if waited := time.Since(released); waited < handoverWait-time.Second {
		t.Fatalf("gave up after %s; a live requester gets %s", waited, handoverWait)
	}
	again := acquireT(t, Options{Dir: dir})
	if again.Epoch() <= h.Epoch() {
		t.Fatalf("taken back at epoch %d, not above %d", again.Epoch(), h.Epoch())
	}
}

// A requester that exits after the owner let go, without taking the guard: the owner takes the
// routines back at once instead of waiting out handoverWait.
func TestHandoverFailsAtOnceWhenRequesterExits(t *testing.T) {
	dir := testDir(t)
	h, err := Acquire(context.Background(), Options{Dir: dir, HeartbeatInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	bystander := forgeRequest(t, dir, h)
	eventually(t, long, "the owner to let go of the guard", func() bool {
		st, _ := Inspect(dir)
		return !h.Admitting() && !st.Held
	})
	_ = bystander.Process.Kill()
	_ = bystander.Wait() // reaped: a zombie would still count as alive
	exited := time.Now()
	receive(t, h.Lost(), "the handle to end")
	if err := h.Err(); !errors.Is(err, ErrHandoverFailed) || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("handle ended with %v, want ErrHandoverFailed (requester exited)", err)
	}
	if d := time.Since(exited); d > handoverWait/2 {
		t.Fatalf("took %s to notice the requester had exited", d)
	}
}

// Once any process has owned after this owner (the durable epoch moved past its own), the
// handover is complete, even when that successor released before the old owner looked, or is
// not the process the request named (a standby won the race): the old owner must not take the
// routines back as if nobody had come.
func TestHandoverCompleteOnceAnyoneOwnedAfter(t *testing.T) {
	dir := testDir(t)
	h, err := Acquire(context.Background(), Options{Dir: dir, HeartbeatInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	standby := startHelper(t, "contender", dir)
	standby.send("wait")
	standby.expect("waiting", long)
	forgeRequest(t, dir, h) // the named requester: alive, never takes the guard
	standby.expect("owned", long)
	standby.send("release") // gone again before the old owner's deadline
	standby.expect("released", long)
	receive(t, h.Lost(), "the handle to end")
	if err := h.Err(); !errors.Is(err, ErrReleased) {
		t.Fatalf("handle ended with %v, want ErrReleased: a successor owned at a later epoch", err)
	}
}

// forgeRequest writes a takeover request to h's owner that names a live process of this user
// which is no challenger (a sleep): it never takes the guard. It returns that process; the test
// ends it.
func forgeRequest(t *testing.T, dir string, h *Handle) *exec.Cmd {
	t.Helper()
	bystander := exec.Command("sleep", "60")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bystander.Process.Kill(); _ = bystander.Wait() })
	id, err := identify(bystander.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	req := testRequest(h.Token())
	req.Requester.PID, req.Requester.PIDStartMS, req.Requester.PIDStartTicks = id.PID, id.StartMS, id.StartTicks
	if err := writeJSONAtomic(dir, requestName, req, false); err != nil {
		t.Fatal(err)
	}
	return bystander
}
