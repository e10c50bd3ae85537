package autostart

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/routinely/routinely/internal/atomicfile"
)

// writeIfChanged writes data to path atomically (temp file, fsync, rename) unless the file
// already holds exactly data: enabling twice leaves one untouched file.
func writeIfChanged(path string, data []byte, perm os.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("autostart: create %s: %w", dir, err)
	}
	if err := atomicfile.Write(path, data, perm); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}

// removeIfExists removes path; a missing file is success (disable is idempotent).
func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("autostart: remove %s: %w", path, err)
	}
	return nil
}
