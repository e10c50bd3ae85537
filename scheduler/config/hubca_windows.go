package config

import "io/fs"

// caChangeable: on Windows the ACL decides, as for the token file.
func caChangeable(fs.FileInfo) string { return "" }
