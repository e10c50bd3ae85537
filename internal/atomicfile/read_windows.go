package atomicfile

import (
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// NoFollow is added to every open of OpenRegular, and by callers that open a state file
// themselves (the guard lock). FILE_FLAG_OPEN_REPARSE_POINT (CreateFile): a symbolic link,
// junction or other reparse point is opened itself rather than followed, so the fstat check
// sees it and refuses it. os.OpenFile hands the high 12 bits of its flag to CreateFile as
// FILE_FLAG_* values. Windows keeps named pipes in \\.\pipe\, never inside a directory, so no
// open there can wait for a writer.
const NoFollow = syscall.FILE_FLAG_OPEN_REPARSE_POINT

// openFile opens path as os.OpenFile does, except that a read-only open of an existing file also
// shares delete access (FILE_SHARE_DELETE), which os.OpenFile never grants. Routinely replaces
// its state files by renaming a new file over them (MoveFileEx), and MoveFileEx holds the file it
// renames open for deletion from the rename until it closes it: a reader that does not share
// delete access fails then with ERROR_SHARING_VIOLATION — for as long as the writer is suspended
// between the two, should it be. Writes and creations keep os.OpenFile's sharing. Errors: those of
// CreateFile, as *fs.PathError (fs.ErrNotExist when path is missing).
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	const noFlags = 0xfff00000 // the FILE_FLAG_* bits os.OpenFile passes through (NoFollow's)
	if flag&^noFlags != os.O_RDONLY {
		return os.OpenFile(path, flag, perm)
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL|uint32(flag&noFlags), 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
