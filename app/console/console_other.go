//go:build !windows

package console

func attach() bool { return false }
