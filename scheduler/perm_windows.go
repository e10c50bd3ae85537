//go:build windows

package scheduler

// insecureFile is "" on Windows: the profile directory's ACL protects the file (DESIGN.md §2).
func insecureFile(string) string { return "" }
