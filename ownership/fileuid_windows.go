package ownership

import "os"

// requestFileUID trusts the directory ACL on Windows (only its user can write there) and returns
// the caller's uid (-1 on Windows, matching os.Getuid).
func requestFileUID(string) int { return os.Getuid() }
