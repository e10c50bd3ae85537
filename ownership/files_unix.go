//go:build unix

package ownership

import "os"

// syncDir fsyncs a directory so a rename inside it survives a crash (rename(2), fsync(2)).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
