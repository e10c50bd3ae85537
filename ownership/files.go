package ownership

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/routinely/routinely/internal/atomicfile"
)

// File names inside the state directory (docs/design.md#2-state-directory).
const (
	lockName    = "owner.lock"
	recordName  = "owner.json"
	epochName   = "epoch"
	requestName = "takeover.json"
	replyName   = "takeover.reply.json"
	tmpMarker   = ".tmp-"
	// tempDirName is the subdirectory where state files are written before the rename into
	// place: the state directory's watchers (takeover requests, journal changes, routines.toml
	// under --home) then see one event per heartbeat, the rename, instead of four (create,
	// write, and both halves of a rename within one directory), which is most of what wakes an
	// idle owner.
	tempDirName = "tmp"
)

// TempDir returns where a state file of the state directory dir is written before its rename
// into place (writeJSONAtomic here, hub.json in the hub package): dir/tmp, created 0700 when
// missing, or dir itself when that is anything but a directory of its own (a file, a symbolic
// link: never written through) or cannot be made. A temp file's name must contain ".tmp-", so
// that an owner's acquire removes it when a crash left it behind (removeStaleTemps).
func TempDir(dir string) string {
	td := filepath.Join(dir, tempDirName)
	fi, err := os.Lstat(td)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(td, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return dir
		}
		fi, err = os.Lstat(td)
	}
	if err != nil || !fi.IsDir() {
		return dir
	}
	return td
}

// writeJSONAtomic writes v as JSON to dir/name so that readers see the old or the new content,
// never a mix: temp file in dir/tmp (TempDir), write, (fsync), rename, (fsync dir). With durable
// false the fsyncs are skipped: used for heartbeats, whose content is diagnostics that the next
// tick rewrites anyway. The temp file is removed on every failure path.
func writeJSONAtomic(dir, name string, v any, durable bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return writeFileAtomic(dir, name, append(data, '\n'), durable)
}

// writeFileAtomic is writeJSONAtomic for bytes already encoded. Errors name dir/name and wrap
// the failing step's error.
func writeFileAtomic(dir, name string, data []byte, durable bool) (err error) {
	path := filepath.Join(dir, name)
	defer func() {
		if err != nil {
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(TempDir(dir), name+tmpMarker+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = replaceFile(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp) // a failed write leaves no temp file behind
		return err
	}
	if durable {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("sync directory: %w", err)
		}
	}
	return nil
}

// maxStateFile bounds every read of owner.json, takeover.json and takeover.reply.json: the
// owner and challengers write about 1 KiB (os.Args included), so anything larger is garbage,
// never read whole. A command line of more than 1 MiB would make its record unreadable too.
const maxStateFile = 1 << 20

// readJSON reads dir/name into v: readJSONFile without the fstat.
func readJSON(dir, name string, v any) error {
	_, err := readJSONFile(dir, name, v)
	return err
}

// readJSONFile reads dir/name into v through atomicfile.Read (no blocking on a named pipe, no
// symbolic link followed, at most maxStateFile bytes) and returns the opened file's fstat. It
// returns fs.ErrNotExist (wrapped) when the file is missing and errGarbage (wrapped, naming the
// file) when it is not a regular file, is too large, empty or not valid JSON.
func readJSONFile(dir, name string, v any) (fs.FileInfo, error) {
	path := filepath.Join(dir, name)
	data, fi, err := readStateBytes(path)
	switch {
	case errors.Is(err, atomicfile.ErrNotRegular), errors.Is(err, atomicfile.ErrTooLarge):
		return nil, fmt.Errorf("%v, so it is %w", err, errGarbage)
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("%s is %w (%v); it is rewritten by the next owner", path, errGarbage, err)
	}
	return fi, nil
}

// readStateFile reads the JSON state file dir/name and returns it with its fstat. It returns
// (nil, nil, nil) when the file is missing, errGarbage (wrapped, naming the file) when it is not
// a regular file, does not parse or lacks what complete requires (missing says what, for the
// message), or the read error (wrapped).
func readStateFile[T any](dir, name, missing string, complete func(*T) bool) (*T, fs.FileInfo, error) {
	v := new(T)
	fi, err := readJSONFile(dir, name, v)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	case !complete(v):
		return nil, nil, fmt.Errorf("%s is %w (no %s)", filepath.Join(dir, name), errGarbage, missing)
	}
	return v, fi, nil
}

// readRecord returns owner.json, nil when it is missing, or errGarbage (wrapped) when it cannot
// be parsed or lacks a token or pid. Readers treat every failure as "owner unknown".
func readRecord(dir string) (*Record, error) {
	r, _, err := readStateFile(dir, recordName, "token or pid", func(r *Record) bool { return r.Token != "" && r.PID > 0 })
	return r, err
}

// readRequest returns takeover.json with writerUID set from the opened file's owner, nil when it
// is missing, or errGarbage (wrapped) when it cannot be parsed or has no id.
func readRequest(dir string) (*Request, error) {
	r, fi, err := readStateFile(dir, requestName, "id", func(r *Request) bool { return r.ID != "" })
	if r != nil {
		r.writerUID = fileOwner(fi)
	}
	return r, err
}

// readReply returns takeover.reply.json, or nil when it is missing or unreadable (a challenger
// then simply has no answer yet).
func readReply(dir string) *Reply {
	r, _, err := readStateFile(dir, replyName, "request id", func(r *Reply) bool { return r.RequestID != "" })
	if err != nil {
		return nil
	}
	return r
}

// removeRequest deletes takeover.json, and the reply to it, if the file still holds request id
// ("" removes whatever is there). The re-read narrows, but cannot close, the window in which a
// newer challenger's request could be deleted by mistake.
func removeRequest(dir, id string) {
	if id != "" {
		if r, err := readRequest(dir); err == nil && (r == nil || r.ID != id) {
			return
		}
	}
	_ = removeFile(filepath.Join(dir, requestName)) // best effort: the owner re-validates anyway
	removeReply(dir, id)
}

// removeReply deletes takeover.reply.json if it answers request id ("" removes whatever is there).
func removeReply(dir, id string) {
	if r := readReply(dir); r != nil && id != "" && r.RequestID != id {
		return
	}
	_ = removeFile(filepath.Join(dir, replyName)) // best effort: a stale reply names its request
}

// removeStaleTemps deletes temp files that a process killed mid-write left behind, in dir/tmp
// and in dir (where they were written before, and still are when dir/tmp cannot be used), so no
// file ever needs a person to delete it. Only files older than a minute go: a live writer
// renames its temp file within milliseconds.
func removeStaleTemps(dir string) {
	for _, d := range []string{filepath.Join(dir, tempDirName), dir} {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.Contains(e.Name(), tmpMarker) {
				continue
			}
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
				_ = os.Remove(filepath.Join(d, e.Name()))
			}
		}
	}
}
