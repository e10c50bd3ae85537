//go:build !nogui && !windows

package tray

// osIcon returns png unchanged: systray takes PNG on Linux/BSD (D-Bus pixmaps) and macOS.
func osIcon(png []byte) ([]byte, error) { return png, nil }
