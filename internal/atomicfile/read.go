package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Errors of OpenRegular and Read; test them with errors.Is.
var (
	// ErrNotRegular: the path names a named pipe, a symbolic link, a directory, a device or a
	// socket, not a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the caller's limit.
	ErrTooLarge = errors.New("larger than allowed")
)

// OpenRegular opens path with flag (os.O_RDONLY, os.O_RDWR, optionally os.O_CREATE) and perm
// for a new file, and returns it only if it is a regular file. The open neither blocks (a named
// pipe with no writer would otherwise hang the caller forever) nor follows a symbolic link or
// reparse point in the last component (NoFollow); the type is then checked on the opened
// descriptor (fstat), so nothing can be swapped in between a check and the use. Errors:
// ErrNotRegular (wrapped, naming path and what it is) for anything else than a regular file;
// otherwise the error of the open (os.OpenFile; fs.ErrNotExist when it is missing) or of the fstat.
func OpenRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := openFile(path, flag|NoFollow, perm)
	if err != nil {
		// O_NOFOLLOW refuses a symlink with ELOOP (EMLINK on FreeBSD), and a socket cannot be
		// opened at all (ENXIO): say what is there. This look decides nothing; the open did.
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is %s: %w", path, kind(fi.Mode()), ErrNotRegular)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, fmt.Errorf("%s is %s: %w", path, kind(fi.Mode()), ErrNotRegular)
	}
	return f, nil
}

// Read returns the contents of the regular file path, at most limit bytes, and the file's
// fstat, as OpenRegular opens it: it never blocks on a named pipe, never follows a symbolic link
// and never reads more than limit+1 bytes, however large the file is. Errors: those of
// OpenRegular; ErrTooLarge (wrapped, naming path and limit) when the file holds more than limit
// bytes; the read error, wrapped.
func Read(path string, limit int64) ([]byte, fs.FileInfo, error) {
	f, err := OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if fi.Size() > limit {
		return nil, fi, fmt.Errorf("%s holds %d bytes, more than %d: %w", path, fi.Size(), limit, ErrTooLarge)
	}
	// The size can grow between the fstat and the read: the reader stops at limit+1 anyway.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fi, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fi, fmt.Errorf("%s holds more than %d bytes: %w", path, limit, ErrTooLarge)
	}
	return data, fi, nil
}

// kind names what a non-regular file is, for error messages.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (mode " + m.String() + ")"
}
