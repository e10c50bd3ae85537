//go:build !linux && !darwin && !windows

package autostart

// Default reports Unsupported: this OS has no login-item implementation.
func Default() Manager { return Manager{b: unsupportedBackend{}} }
