//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// returnsWithin fails the test when f has not returned after d: a blocking open would hang.
func returnsWithin[T any](t *testing.T, d time.Duration, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		t.Fatalf("%s still blocked after %s", what, d)
		var zero T
		return zero
	}
}

func TestReadRefusesNonRegularFilesWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, says string }{
		{"FIFO", fifo, "named pipe"},
		{"symlink", link, "symbolic link"},
		{"directory", dir, "directory"},
	} {
		err := returnsWithin(t, 5*time.Second, "Read of a "+c.name, func() error {
			_, _, err := Read(c.path, 1024)
			return err
		})
		if !errors.Is(err, ErrNotRegular) || !containsAll(err.Error(), c.path, c.says) {
			t.Errorf("%s: %v, want ErrNotRegular naming it a %s", c.name, err, c.says)
		}
	}
	// Opened for writing and created, as the epoch file is: a symlink is not followed, so its
	// target is neither opened nor created.
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "created-through-link"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link, dangling} {
		if _, err := OpenRegular(p, os.O_RDWR|os.O_CREATE, 0o600); !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenRegular(%s, O_RDWR|O_CREATE): %v, want ErrNotRegular", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "created-through-link")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dangling symlink's target was created: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "someone else's" {
		t.Errorf("symlink target changed: %q", got)
	}
}

func TestReadIsBounded(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, fi, err := Read(small, 10); err != nil || string(data) != "0123456789" || fi.Size() != 10 {
		t.Fatalf("Read at the limit: %q %v %v", data, fi, err)
	}
	if _, _, err := Read(small, 9); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read over the limit: %v, want ErrTooLarge", err)
	}
	// A 200 MB (sparse) file is refused without being read: far less than its size is allocated.
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err = Read(huge, 1<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read of 200 MB: %v, want ErrTooLarge", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("Read of a 200 MB file allocated %d bytes: it was read, not bounded", alloc)
	}
	// A file whose fstat size says less than it holds (Linux /proc reports 0) is still cut at the
	// limit: the read itself is bounded, not only the size check.
	if runtime.GOOS == "linux" {
		if _, _, err := Read("/proc/self/status", 16); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Read of /proc/self/status with a 16-byte limit: %v, want ErrTooLarge", err)
		}
	}
	if _, _, err := Read(filepath.Join(dir, "absent"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
