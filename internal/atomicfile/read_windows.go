package atomicfile

import "syscall"

// NoFollow is added to every open of OpenRegular, and by callers that open a state file
// themselves (the guard lock). FILE_FLAG_OPEN_REPARSE_POINT (CreateFile): a symbolic link,
// junction or other reparse point is opened itself rather than followed, so the fstat check
// sees it and refuses it. os.OpenFile hands the high 12 bits of its flag to CreateFile as
// FILE_FLAG_* values. Windows keeps named pipes in \\.\pipe\, never inside a directory, so no
// open there can wait for a writer.
const NoFollow = syscall.FILE_FLAG_OPEN_REPARSE_POINT
