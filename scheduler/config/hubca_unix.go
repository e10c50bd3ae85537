//go:build !windows

package config

import "io/fs"

// caChangeable says why another user could change the ca_file fi (its fstat), or "".
func caChangeable(fi fs.FileInfo) string {
	if uid, ok := trustedOwner(fi); !ok {
		return "is owned by " + userName(uid)
	}
	if m := fi.Mode(); m.Perm()&0o022 != 0 {
		return "is group- or world-writable (mode " + octal(m) + ")"
	}
	return ""
}
