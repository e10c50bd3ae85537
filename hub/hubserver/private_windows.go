//go:build windows

package hubserver

import "io/fs"

// private: on Windows the ACL decides, as for the state directory.
func private(fs.FileInfo) error { return nil }
