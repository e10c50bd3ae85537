package ownership

import "testing"

func TestUnsafeFilesystems(t *testing.T) {
	for magic, want := range map[int64]string{0x6969: "NFS", 0x517b: "SMB", 0xfe534d42: "SMB", 0xff534d42: "CIFS", 0x65735546: "FUSE", 0xef53: ""} {
		if got := unsafeFilesystem(magic); got != want {
			t.Errorf("magic %#x: %q, want %q", magic, got, want)
		}
	}
	// The real state directory of the tests is on a local filesystem and passes.
	if err := checkDirFilesystem(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}
