package journal

// The journal file as opened, against what its path holds now. Deleting journal.db while the
// owner has it open does not stop SQLite: it goes on writing to the unlinked file, every later
// run is lost at the owner's end, and status and history (which open the path) see nothing.
// The owner therefore checks the path with each heartbeat and before each run's claim (Intact)
// and, when the file was only deleted, puts the one it still has open back (Restore).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// requestIntact is Intact for the writes any process makes (run-now requests, pauses): a process
// that does not own (epoch 0) and kept its handle across a deletion would write them into the
// deleted file, where the owner never sees them. The owner's own writes go to the file it has
// open, which it puts back (Restore), so they need no check. Errors: Intact's.
func (j *Journal) requestIntact() error {
	if j.epoch.Load() != 0 {
		return nil
	}
	return j.Intact()
}

// Intact checks that the journal's path still holds the file this handle opened: the same file
// (os.SameFile: device and inode, or volume and file index on Windows) as when it was opened.
// The open file is held by SQLite, so a new file at the path can never reuse its inode, and a
// path that names it has a link to it. Errors: one wrapping ErrReplaced that says whether the
// path is empty (deleted) or holds another file; a stat error other than "not there", wrapped.
func (j *Journal) Intact() error {
	if j.file == nil {
		return nil // no identity taken (not opened through openDB)
	}
	fi, err := os.Lstat(j.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s is gone (deleted or moved)", ErrReplaced, j.path)
	case err != nil:
		return fmt.Errorf("journal %s: %w", j.path, err)
	case !os.SameFile(fi, j.file):
		return fmt.Errorf("%w: %s is another file now", ErrReplaced, j.path)
	}
	return nil
}

// RestoredSuffix names the finished copy of a journal being put back (Restore): journal.db +
// RestoredSuffix. An owner killed between finishing the copy and linking it into place leaves
// it there, and the next owner adopts it (AdoptRestored) instead of starting an empty journal.
const RestoredSuffix = ".restored"

// Restore puts a copy of the open journal back at its path when that path is empty (journal.db
// was deleted while open) and closes j. Everything the open file holds is kept: the history
// before the deletion, and the claims, epochs and anchors that keep a slot from running twice.
// The copy is a consistent snapshot written by SQLite (VACUUM INTO) to a private temporary file
// beside the path (journal.db.restore.tmp-*, which the next owner removes when a kill leaves it
// half written: ownership's stale temporary files), synced and renamed to journal.db +
// RestoredSuffix once whole, then linked to the path only if nothing is there (a link never
// replaces a file); the -wal and -shm the closed journal leaves at the path are removed first,
// so the copy never meets the write-ahead log of another file. Call it with nothing writing to j
// (the engine stopped). When the file at the path is j's own again (moved back), Restore only
// closes j. Errors: one wrapping ErrReplaced when another file is at the path: then
// nothing is changed and j stays open, so Restore may be called again once the path is free;
// otherwise j is closed, and the error is the copy's, the sync's or the link's, wrapped (when
// another file appeared at the path meanwhile, the copy is left beside it and named).
func (j *Journal) Restore() error {
	if j.Intact() == nil { // moved back meanwhile: it is in place already
		return j.Close()
	}
	if _, err := os.Lstat(j.path); err == nil {
		return fmt.Errorf("%w: %s is another file now, left as it is", ErrReplaced, j.path)
	}
	defer func() { _ = j.Close() }()
	dir, base := filepath.Split(j.path)
	tmp, err := os.CreateTemp(dir, base+".restore.tmp-*") // 0600, whatever the umask
	if err != nil {
		return fmt.Errorf("restore journal: %w", err)
	}
	name := tmp.Name()
	_ = tmp.Close()
	defer func() { _ = os.Remove(name) }() // gone once renamed
	uri, err := URI(name, nil)
	if err != nil {
		return err
	}
	if _, err := j.db.Exec(`VACUUM INTO ?`, uri); err != nil {
		return fmt.Errorf("restore journal: copy to %s: %w", name, err)
	}
	if err := syncFile(name); err != nil {
		return fmt.Errorf("restore journal: %w", err)
	}
	restored := j.path + RestoredSuffix
	if err := os.Rename(name, restored); err != nil {
		return fmt.Errorf("restore journal: %w", err)
	}
	_ = syncFile(dir)
	// The last connection's close checkpoints into the open (deleted) file and removes the
	// -wal and -shm at the path, which are its own.
	if err := j.Close(); err != nil {
		return fmt.Errorf("restore journal: close the replaced journal: %w", err)
	}
	return linkRestored(j.path)
}

// linkRestored links path + RestoredSuffix, a whole copy of a journal, to path, which must be
// empty, after removing any -wal and -shm left at path (they belong to the file that was
// deleted, and SQLite would replay them into the copy); then removes the copy's second name.
// Errors: the removals' and the link's, wrapped; one naming the copy when another file is at
// path (then the copy is left as it is).
func linkRestored(path string) error {
	restored := path + RestoredSuffix
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if err := os.Remove(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore journal: %w", err)
		}
	}
	if err := os.Link(restored, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("restore journal: another file appeared at %s meanwhile, left as it is; the journal's copy is %s: %w", path, restored, err)
		}
		return fmt.Errorf("restore journal: %w", err)
	}
	_ = os.Remove(restored)
	_ = syncFile(filepath.Dir(path)) // the new name durable where a directory can be synced (not on Windows)
	return nil
}

// AdoptRestored finishes a put-back that an owner killed mid-way left undone: when path (the
// journal) is missing and path + RestoredSuffix is a regular file, it links that copy into
// place (linkRestored) and reports true. When path is that copy already (a kill after the
// link), it removes the copy's second name. Only a process that holds the guard calls it,
// before opening the journal: the owner that made the copy is then dead. Errors: the link's,
// wrapped; one wrapping ErrRestoredBeside when path is another file made since (a journal
// started anew while the copy waited): both are left as they are, for a person to choose.
func AdoptRestored(path string) (bool, error) {
	restored := path + RestoredSuffix
	copyInfo, err := os.Lstat(restored)
	if err != nil || !copyInfo.Mode().IsRegular() {
		return false, nil
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := linkRestored(path); err != nil {
			return false, err
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("journal %s: %w", path, err)
	case os.SameFile(fi, copyInfo):
		_ = os.Remove(restored)
		return false, nil
	}
	return false, fmt.Errorf("%w: %s holds the journal an earlier owner was putting back, and %s was made since: the routines run on %s; to go back to the earlier journal, stop the owner and move %s over it", ErrRestoredBeside, restored, path, path, restored)
}

// syncFile fsyncs the file or directory at path. Errors: the open's or the sync's.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
