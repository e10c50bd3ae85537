package ownership

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/routinely/routinely/internal/atomicfile"
)

// nextEpoch computes and durably stores the fencing epoch of a new owner: one more than the
// highest of the epoch file, the previous owner record (prev, may be nil) and floor (the
// journal's highest epoch). It must be called with the guard held, and it returns only after the
// epoch file is fsynced, so no later owner can ever be handed the same epoch, even if owner.json
// is deleted. Errors: the I/O error (wrapped) of writing dir/epoch.
func nextEpoch(dir string, prev *Record, floor uint64, log *slog.Logger) (uint64, error) {
	highest := floor
	if prev != nil && prev.Epoch > highest {
		highest = prev.Epoch
	}
	stored, err := readEpochFile(dir)
	if err != nil {
		// An unreadable epoch file cannot be repaired by anyone; the other sources still bound
		// the epoch from below, and the rewrite below heals the file.
		log.Warn("epoch file unreadable; using owner.json and the journal", "err", err)
	}
	if stored > highest {
		highest = stored
	}
	epoch := highest + 1
	if err := storeEpoch(dir, epoch); err != nil {
		return 0, fmt.Errorf("store epoch: %w", err)
	}
	return epoch, nil
}

// storeEpoch overwrites dir/epoch in place with a fixed-width line (20 digits and a newline) and
// fsyncs it: one fsync, where a temp file and rename would need a second one of the directory on
// the crash-recovery path. Only the guard holder writes or reads it, so no reader sees it half
// written. A power cut during the write can at worst mix the old and new digits of one sector,
// giving a value between the two; the owner that was writing never acted (Acquire had not
// returned), so no epoch that fenced anything can be handed out again. The directory is synced
// only when the file is new.
//
// The in-place write goes only to a regular file with a single link, opened without following a
// symbolic link: anything else at that name (a symlink, a named pipe, a hard link to some other
// file) is replaced by a new file through a temp file and rename instead, so writing the epoch
// never truncates or blocks on a file that is not Routinely's. Errors name dir/epoch and wrap
// the failing step's error.
func storeEpoch(dir string, epoch uint64) error {
	path := filepath.Join(dir, epochName)
	line := []byte(fmt.Sprintf("%020d\n", epoch))
	_, statErr := os.Lstat(path)
	f, err := atomicfile.OpenRegular(path, os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return writeFileAtomic(dir, epochName, line, true)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if fi, err := f.Stat(); err == nil && linkCount(fi) > 1 {
		_ = f.Close()
		return writeFileAtomic(dir, epochName, line, true)
	}
	_, err = f.WriteAt(line, 0)
	if err == nil {
		err = f.Truncate(int64(len(line))) // drop anything longer, e.g. left by a hand edit
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && errors.Is(statErr, fs.ErrNotExist) {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// maxEpochFile bounds the read of dir/epoch: it holds 21 bytes; more is garbage, never read whole.
const maxEpochFile = 64

// readEpochFile returns the epoch stored in dir/epoch (0 when missing) or an error naming the
// file: errGarbage (wrapped) when it is not a regular file, is larger than maxEpochFile or does
// not hold a number; the read error otherwise. It never blocks on a named pipe or follows a
// symbolic link (atomicfile.Read).
func readEpochFile(dir string) (uint64, error) {
	path := filepath.Join(dir, epochName)
	data, _, err := atomicfile.Read(path, maxEpochFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case errors.Is(err, atomicfile.ErrNotRegular), errors.Is(err, atomicfile.ErrTooLarge):
		return 0, fmt.Errorf("%v, so it is %w", err, errGarbage)
	case err != nil:
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is %w: %v", path, errGarbage, err)
	}
	return n, nil
}
