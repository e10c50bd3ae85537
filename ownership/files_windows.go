package ownership

// syncDir is a no-op on Windows: directories cannot be opened for FlushFileBuffers, and NTFS
// journals the rename (MoveFileEx) itself.
func syncDir(string) error { return nil }
