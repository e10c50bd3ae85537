package journal

import (
	"errors"
	"io/fs"
	"os"
)

// createPrivate creates the journal file at path, empty and mode 0600, when there is none yet.
// SQLite would create it 0644 less the umask, and its unix VFS gives the -wal and -shm files the
// main file's permissions (findCreateFileMode and unixOpenSharedMemory in os_unix.c): created
// here first, all three hold the routines' captured output for this user only, whatever the
// umask. The mode is set on the descriptor, since the umask may have removed bits from 0600. An
// existing file is left alone. Errors: the create or chmod error.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	err = f.Chmod(0o600)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
