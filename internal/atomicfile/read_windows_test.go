package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// A file held open for deletion, as MoveFileEx holds the file it renames over a state file until
// it closes it, can still be read: Read shares delete access. os.Open cannot read it then
// (ERROR_SHARING_VIOLATION), which is what an observer racing the owner's heartbeat would hit.
func TestReadWhileHeldOpenForDeletion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "owner.json")
	if err := os.WriteFile(path, []byte(`{"x":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(p, windows.DELETE|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	if _, err := os.ReadFile(path); err == nil {
		t.Fatal("os.ReadFile read a file held open for deletion: this test would prove nothing")
	}
	data, _, err := Read(path, 64)
	if err != nil || string(data) != `{"x":1}` {
		t.Fatalf("Read = %q, %v; want the content", data, err)
	}
}
