package ownership

import (
	"os"
	"path/filepath"
	"testing"
)

// On Windows owner.lock cannot be deleted or replaced while its owner has it open (Go opens files
// without FILE_SHARE_DELETE), so the guard can never be swapped behind an owner's back; that is why
// linkCount is 1 there and guard.intact only compares the path (the Linux counterpart is
// TestGuardUnlinked). Once the owner has released, it can.
func TestGuardCannotBeDeletedWhileOwned(t *testing.T) {
	dir := testDir(t)
	owner := startHelper(t, "contender", dir)
	owner.send("acquire")
	owner.expect("owned", long)
	guardPath := filepath.Join(dir, lockName)
	if err := os.Remove(guardPath); err == nil || !isSharingViolation(err) {
		t.Fatalf("remove owner.lock while owned: %v, want a sharing violation", err)
	}
	if err := os.Rename(guardPath, guardPath+".moved"); err == nil {
		t.Fatal("owner.lock renamed while owned")
	}
	st, err := Inspect(dir)
	if err != nil || !heldBy(st, owner.pid()) {
		t.Fatalf("after the attempts: %+v %v, want still held by %d", st, err, owner.pid())
	}
	owner.stop()
	if err := os.Remove(guardPath); err != nil {
		t.Fatalf("remove owner.lock after release: %v", err)
	}
}
