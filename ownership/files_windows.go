package ownership

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// syncDir is a no-op on Windows: directories cannot be opened for FlushFileBuffers, and NTFS
// journals the rename (MoveFileEx) itself.
func syncDir(string) error { return nil }

// replaceRetryFor bounds how long replaceFile retries a rename refused because a reader has the
// target open.
const replaceRetryFor = 500 * time.Millisecond

// replaceFile renames tmp over path. Windows refuses to replace a file that another process has
// open without FILE_SHARE_DELETE, which is how os.Open and os.ReadFile open it; observers and
// challengers read owner.json and takeover.reply.json every 50 ms, each read lasting
// microseconds. Without a retry the owner would report spurious write failures and could lose a
// "denied" reply, leaving the challenger to wait out its deadline.
func replaceFile(tmp, path string) error {
	deadline := time.Now().Add(replaceRetryFor)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		err := os.Rename(tmp, path)
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
