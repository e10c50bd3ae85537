package ownership

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// maxInPlace bounds the file writeJSONInPlace pads to: an owner record is about 1 KiB.
const maxInPlace = 64 << 10

// errNotInPlace: the file to overwrite in place is missing, not a regular file, larger than
// maxInPlace, or was swapped for another between the look and the open.
var errNotInPlace = errors.New("no regular file to overwrite in place")

// writeJSONInPlace overwrites dir/name with v as JSON inside the existing file, for when the
// atomic write (a new temp file, then rename) fails: on a full disk a new file gets no blocks, but
// rewriting the blocks a file already has needs none (ext4, xfs, tmpfs; not copy-on-write
// filesystems such as btrfs or ZFS). The JSON is padded with spaces to the file's current size,
// so the file never shrinks and a reader never sees the old content's tail (JSON allows trailing
// whitespace). A reader racing the single write may still see a torn record, which it reports as
// unreadable until the next heartbeat; that is the price of a heartbeat that survives a full
// disk. Only a regular file is written, and only the one looked at (a FIFO or a file swapped in
// between is refused, and O_NONBLOCK keeps a FIFO's open from blocking). Errors: errNotInPlace or
// the I/O error, wrapped with the path.
func writeJSONInPlace(dir, name string, v any, durable bool) (err error) {
	path := filepath.Join(dir, name)
	defer func() {
		if err != nil {
			err = fmt.Errorf("rewrite %s in place: %w", path, err)
		}
	}()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	before, err := os.Lstat(path)
	if err != nil || !before.Mode().IsRegular() {
		return errNotInPlace
	}
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	opened, err := f.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(before, opened) || !opened.Mode().IsRegular() {
		return errNotInPlace
	}
	if opened.Size() > maxInPlace {
		return errNotInPlace // not what this owner wrote; the atomic write replaces it later
	}
	if pad := int(opened.Size()) - len(data); pad > 0 {
		data = append(data, bytes.Repeat([]byte{' '}, pad)...)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	if durable {
		return f.Sync()
	}
	return nil
}
