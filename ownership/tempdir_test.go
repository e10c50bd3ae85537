//go:build linux || windows

package ownership

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Temp files a killed writer left behind — in dir/tmp, and in dir itself where they were written
// before — are removed when someone becomes owner, once older than a minute; a fresh one (a live
// writer's) is kept.
func TestStaleTempsAreRemovedOnAcquire(t *testing.T) {
	dir := testDir(t)
	if err := os.Mkdir(filepath.Join(dir, tempDirName), 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Minute)
	stale := []string{filepath.Join(dir, tempDirName, recordName+tmpMarker+"aaaa"), filepath.Join(dir, recordName+tmpMarker+"bbbb")}
	fresh := filepath.Join(dir, tempDirName, recordName+tmpMarker+"cccc")
	for _, p := range append(stale, fresh) {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range stale {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	acquireT(t, Options{Dir: dir})
	for _, p := range stale {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("stale temp %s still there (%v)", p, err)
		}
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Errorf("a fresh temp was removed: %v", err)
	}
}

// dir/tmp that is not a directory of its own (a file, a link to another directory) is never
// written through: the owner writes its temp files in dir instead, and its record stays current.
func TestTempDirThatIsNotADirectoryIsNotUsed(t *testing.T) {
	for name, plant := range map[string]func(t *testing.T, td string) (elsewhere string){
		"a file": func(t *testing.T, td string) string {
			if err := os.WriteFile(td, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			return ""
		},
		"a symbolic link": func(t *testing.T, td string) string {
			other := t.TempDir()
			if err := os.Symlink(other, td); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			if fi, err := os.Lstat(td); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				// Wine 8.0's CreateSymbolicLinkW is a stub that reports success and creates
				// nothing. Windows makes the link or fails (without the symbolic-link
				// privilege), and Unix makes it, so only Wine gets here.
				t.Skipf("os.Symlink reported success but made no link (%v): Wine's stub", err)
			}
			return other
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := testDir(t)
			td := filepath.Join(dir, tempDirName)
			elsewhere := plant(t, td)
			if got := TempDir(dir); got != dir {
				t.Fatalf("tempDir = %s, want %s", got, dir)
			}
			h := acquireT(t, Options{Dir: dir, HeartbeatInterval: 20 * time.Millisecond})
			first := h.Record().HeartbeatAt
			deadline := time.Now().Add(long)
			for {
				var rec Record
				if err := readJSON(dir, recordName, &rec); err == nil && rec.HeartbeatAt.After(first) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the heartbeat did not rewrite owner.json")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if elsewhere != "" {
				if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
					t.Fatalf("written through the link: %v", entries)
				}
			}
		})
	}
}
