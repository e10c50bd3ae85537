//go:build unix

package ownership

import (
	"errors"
	"io/fs"
	"os"

	"github.com/routinely/routinely/internal/atomicfile"
)

// syncDir fsyncs a directory so a rename inside it survives a crash (rename(2), fsync(2)).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// replaceFile renames tmp over path; rename(2) replaces it atomically even while readers have it
// open.
func replaceFile(tmp, path string) error { return os.Rename(tmp, path) }

// removeFile deletes path; a missing file is not an error.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readStateBytes reads a state file as atomicfile.Read does, bounded by maxStateFile: on Unix a
// rename over it never disturbs a reader.
func readStateBytes(path string) ([]byte, fs.FileInfo, error) {
	return atomicfile.Read(path, maxStateFile)
}
