//go:build windows

package config

import "io/fs"

// openNonBlock: Windows has no FIFOs at a file path.
const openNonBlock = 0

// tokenShared: on Windows the file's ACL decides, as for the state directory.
func tokenShared(fs.FileInfo) bool { return false }
