package ownership

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// guardDescriptors returns this process's descriptors of dir/owner.lock (the same file by
// device and inode), ascending.
func guardDescriptors(tb testing.TB, dir string) []int {
	tb.Helper()
	guard, err := os.Stat(filepath.Join(dir, lockName))
	if err != nil {
		tb.Fatal(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Fatal(err)
	}
	var fds []int
	for _, e := range ents {
		if fi, err := os.Stat("/proc/self/fd/" + e.Name()); err == nil && os.SameFile(fi, guard) {
			fd, _ := strconv.Atoi(e.Name())
			fds = append(fds, fd)
		}
	}
	slices.Sort(fds)
	return fds
}

// closeOnExec reports whether descriptor fd of this process is close-on-exec, from the flags
// line of /proc/self/fdinfo/FD (proc(5)); it fails tb when there is none.
func closeOnExec(tb testing.TB, fd int) bool {
	tb.Helper()
	info, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				tb.Fatalf("fdinfo %d: %q: %v", fd, l, err)
			}
			return flags&unix.O_CLOEXEC != 0
		}
	}
	tb.Fatalf("fdinfo %d has no flags line: %q", fd, info)
	return false
}

// An owner's guard is one descriptor, close-on-exec, numbered guardFDFloor or above: above an
// inotify instance the owner opens after it (as its scheduler does), so the lock is released
// first when the owner dies (fdLock). Releasing the handle closes it.
func TestTheGuardsDescriptorIsAboveWhatTheOwnerOpensAfterIt(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && lim.Cur <= guardFDFloor {
		t.Skipf("descriptor limit %d: the guard is locked on a low descriptor (fdLock.open)", lim.Cur)
	}
	dir := testDir(t)
	h, err := Acquire(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	watch, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(watch)
	if _, err := unix.InotifyAddWatch(watch, dir, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	fds := guardDescriptors(t, dir)
	if len(fds) != 1 || fds[0] < guardFDFloor || fds[0] < watch {
		t.Fatalf("descriptors of owner.lock: %v, an inotify instance opened after: %d; want one descriptor at %d or above", fds, watch, guardFDFloor)
	}
	if !closeOnExec(t, fds[0]) {
		t.Fatalf("the guard's descriptor %d would be inherited by the owner's children", fds[0])
	}
	if err := h.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if fds := guardDescriptors(t, dir); len(fds) != 0 {
		t.Fatalf("owner.lock still open after Release: descriptors %v", fds)
	}
	h2, err := Acquire(context.Background(), Options{Dir: dir}) // free at once
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	_ = h2.Release(context.Background())
}

// A standby's guard, taken by the blocking lock when the holder lets go, is placed the same way:
// it is the owner the next crash recovery starts from.
func TestAStandbysGuardDescriptorIsPlacedToo(t *testing.T) {
	dir := testDir(t)
	holder := holdGuard(t, dir)
	got := make(chan *Handle, 1)
	go func() {
		h, err := Wait(context.Background(), Options{Dir: dir})
		if err != nil {
			t.Error(err)
		}
		got <- h
	}()
	// Let go only once the standby waits in flock(2): /proc/locks shows a blocked waiter as "->".
	fi, err := os.Stat(filepath.Join(dir, lockName))
	if err != nil {
		t.Fatal(err)
	}
	file := procLocksFile(fi.Sys().(*syscall.Stat_t))
	eventually(t, long, "the standby blocked on the guard", func() bool {
		b, err := os.ReadFile("/proc/locks")
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); err == nil && len(f) > 6 && f[1] == "->" && f[6] == file {
				return true
			}
		}
		return false
	})
	if err := holder.Unlock(); err != nil {
		t.Fatal(err)
	}
	h := receive(t, got, "the standby to own")
	if h == nil {
		return
	}
	defer func() { _ = h.Release(context.Background()) }()
	if fds := guardDescriptors(t, dir); len(fds) != 1 || fds[0] < guardFDFloor || !closeOnExec(t, fds[0]) {
		t.Fatalf("descriptors of owner.lock: %v; want one, close-on-exec, at %d or above", fds, guardFDFloor)
	}
}

// A lock refused because another open file description holds it leaves no descriptor open
// (fdLock closes what it opened on every failure): a challenger polling tryGuard every 20 ms
// would otherwise run out of descriptors.
func TestARefusedLockLeavesNoDescriptor(t *testing.T) {
	dir := testDir(t)
	holder := holdGuard(t, dir)
	defer func() { _ = holder.Unlock() }()
	held := guardDescriptors(t, dir)
	for range 3 {
		if g, err := tryGuard(dir); g != nil || err != nil {
			t.Fatalf("tryGuard while another description holds the lock: %v, %v", g, err)
		}
	}
	if fds := guardDescriptors(t, dir); !slices.Equal(fds, held) {
		t.Fatalf("descriptors of owner.lock after 3 refusals: %v, want only the holder's %v", fds, held)
	}
}

// helperFDTable reports this fresh process's descriptor table size (FDSize, proc(5)) before and
// after normalize, which an Acquire or a standby's Wait runs first.
func helperFDTable() int {
	fdSize := func() string {
		b, _ := os.ReadFile("/proc/self/status")
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "FDSize:"); ok {
				return strings.TrimSpace(v)
			}
		}
		return "?"
	}
	before := fdSize()
	if _, err := normalize(Options{Dir: os.Getenv(envDir)}); err != nil {
		say("error %v", err)
		return 1
	}
	say("fdsize %s %s", before, fdSize())
	return 0
}

// A standby grows its descriptor table past guardFDFloor before it waits (prepareGuardFD), not
// when the guard comes free: growing it in a process with threads waits for an RCU grace period,
// which would add ~10 ms to every crash recovery. Checked in a fresh process, whose table is
// still small.
func TestTheDescriptorTableIsGrownBeforeTheGuardIsTaken(t *testing.T) {
	p := startHelper(t, "fdtable", testDir(t))
	f := p.expect("fdsize", long)
	before, _ := strconv.Atoi(f[1])
	after, _ := strconv.Atoi(f[2])
	if before > guardFDFloor || after <= guardFDFloor {
		t.Fatalf("descriptor table %d before normalize, %d after; want it grown past %d by normalize", before, after, guardFDFloor)
	}
}
