package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWriteReplacesWithModeAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new" {
		t.Fatalf("content %q, %v; want new", got, err)
	}
	// Windows keeps only the owner-writable bit of a mode (os.Chmod): a writable file is 0666.
	want := os.FileMode(0o644)
	if runtime.GOOS == "windows" {
		want = 0o666
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != want {
		t.Fatalf("mode %v, want %v", st.Mode().Perm(), want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the file (no temp left)", len(entries))
	}
}

func TestWriteIntoMissingDirectoryFailsCleanly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent", "f")
	if err := Write(path, []byte("x"), 0o600); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
