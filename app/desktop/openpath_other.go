//go:build !(linux || freebsd || openbsd || netbsd) && !nogui

package desktop

import (
	"fmt"
	"net/url"

	"fyne.io/fyne/v2"
)

// openPath opens path with the system's default handler (Fyne's OpenURL: `open` on macOS, the
// shell's file association on Windows). Errors: the opener could not be started.
func openPath(a fyne.App, path string) error {
	if err := a.OpenURL(&url.URL{Scheme: "file", Path: path}); err != nil {
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	return nil
}
