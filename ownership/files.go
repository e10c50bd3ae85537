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
)

// File names inside the state directory (DESIGN.md §2).
const (
	lockName    = "owner.lock"
	recordName  = "owner.json"
	epochName   = "epoch"
	requestName = "takeover.json"
	replyName   = "takeover.reply.json"
	tmpMarker   = ".tmp-"
)

// writeJSONAtomic writes v as JSON to dir/name so that readers see the old or the new content,
// never a mix: temp file in the same directory, write, (fsync), rename, (fsync dir). With durable
// false the fsyncs are skipped: used for heartbeats, whose content is diagnostics that the next
// tick rewrites anyway. The temp file is removed on every failure path.
func writeJSONAtomic(dir, name string, v any, durable bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return writeFileAtomic(dir, name, append(data, '\n'), durable)
}

func writeFileAtomic(dir, name string, data []byte, durable bool) (err error) {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, name+tmpMarker+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	_, werr := f.Write(data)
	if werr == nil && durable {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), werr)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	if durable {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("write %s: sync directory: %w", filepath.Join(dir, name), err)
		}
	}
	return nil
}

// readJSON reads dir/name into v. It returns fs.ErrNotExist (wrapped) when the file is missing
// and errGarbage (wrapped, naming the file) when it is empty or not valid JSON.
func readJSON(dir, name string, v any) error {
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is %w (%v); it is rewritten by the next owner", path, errGarbage, err)
	}
	return nil
}

// readRecord returns owner.json, nil when it is missing, or errGarbage (wrapped) when it cannot
// be parsed or lacks a token. Readers treat every failure as "owner unknown".
func readRecord(dir string) (*Record, error) {
	var r Record
	err := readJSON(dir, recordName, &r)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case r.Token == "" || r.PID <= 0:
		return nil, fmt.Errorf("%s is %w (no token or pid)", filepath.Join(dir, recordName), errGarbage)
	}
	return &r, nil
}

// removeStaleTemps deletes temp files that a process killed mid-write left behind, so no file
// ever needs a person to delete it. Only files older than a minute go: a live writer renames its
// temp file within milliseconds.
func removeStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.Contains(e.Name(), tmpMarker) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
