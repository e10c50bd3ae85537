package ownership

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/windows"

	"github.com/routinely/routinely/internal/atomicfile"
)

// syncDir is a no-op on Windows: directories cannot be opened for FlushFileBuffers, and NTFS
// journals the rename (MoveFileEx) itself.
func syncDir(string) error { return nil }

// inUseRetryFor bounds how long replaceFile and removeFile retry while another process has the
// file open.
const inUseRetryFor = 500 * time.Millisecond

// replaceFile renames tmp over path. Windows refuses to replace or delete a file that another
// process has open without FILE_SHARE_DELETE, which is how os.Open and os.ReadFile open it;
// observers and challengers read owner.json and takeover.reply.json every 50 ms, each read
// lasting microseconds. Without a retry the owner would report spurious write failures and could
// lose a "denied" reply, leaving the challenger to wait out its deadline.
func replaceFile(tmp, path string) error {
	return retryWhileInUse(func() error { return os.Rename(tmp, path) })
}

// removeFile deletes path, retrying as replaceFile does (a challenger withdrawing its request
// while the owner reads it), so a withdrawal is not silently lost. A missing file is not an error.
func removeFile(path string) error {
	err := retryWhileInUse(func() error { return os.Remove(path) })
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// readStateBytes reads a state file as atomicfile.Read does, bounded by maxStateFile, retrying
// as replaceFile does while the file is in use. The owner renames a new owner.json over the old
// one every heartbeat; while MoveFileEx replaces it, it holds the old file open for deletion, and
// an open without FILE_SHARE_DELETE (os.Open's) fails with ERROR_SHARING_VIOLATION. Without the
// retry an observer would now and then see no owner record at all, and call a live owner
// unknown.
func readStateBytes(path string) (data []byte, fi fs.FileInfo, err error) {
	err = retryWhileInUse(func() error {
		data, fi, err = atomicfile.Read(path, maxStateFile)
		return err
	})
	return data, fi, err
}

// retryWhileInUse runs op until it succeeds, fails for another reason than a sharing violation,
// or inUseRetryFor has passed, backing off from 1 ms to 50 ms; it returns op's last error.
func retryWhileInUse(op func() error) error {
	deadline := time.Now().Add(inUseRetryFor)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		err := op()
		if err == nil || !isSharingViolation(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(delay)
	}
}

// isSharingViolation reports whether err means "the file is in use" (ERROR_ACCESS_DENIED,
// ERROR_SHARING_VIOLATION), as MoveFileEx says when the target is open.
func isSharingViolation(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
