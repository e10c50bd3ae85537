//go:build windows && !nogui

package tray

import (
	"bytes"
	"fmt"
	"image"
	_ "image/png" // the icons are PNGs: image.Decode needs the decoder registered
	"log/slog"
	"runtime"
	"time"

	"fyne.io/systray"
	"github.com/fyne-io/image/ico"
)

// readyWait bounds how long Start waits for systray's window to exist.
const readyWait = 10 * time.Second

// link is what the item lives on. On Windows that is systray's own hidden window and its
// notification-area icon, made by this process and kept until end: no bus or other connection
// can end under the app, so it is always connected. (At logout, WM_ENDSESSION, systray deletes
// the icon itself and the app quits through onSessionEnd; later calls only fail and are logged
// by systray.)
type link struct{}

// Connected is always true: see link.
func (link) Connected() bool { return true }

// register returns systray's start and end functions. systray's own external-loop mode does not
// fit Windows: it creates the tray's hidden window on the caller's thread and pumps messages on
// another goroutine, while a window's messages reach only the thread that created it. So start
// runs systray.Run (window and message loop together) on a goroutine locked to its OS thread,
// and waits until the window exists: systray drops menu calls made before (title becomes the
// icon's tooltip then). onSessionEnd (may be nil) is systray's exit callback: it runs on that loop at WM_ENDSESSION (logout), and Windows
// waits for it; it also runs after end.
func register(title string, onSessionEnd func()) (start, end func()) {
	start = func() {
		ready := make(chan struct{})
		go func() {
			runtime.LockOSThread() // for good: the loop owns this thread until the process ends
			systray.Run(func() { close(ready) }, onSessionEnd)
		}()
		select {
		case <-ready:
			systray.SetTooltip(title)
		case <-time.After(readyWait):
			slog.Warn("tray: the notification-area icon did not appear", "waited", readyWait)
		}
	}
	return start, systray.Quit
}

// canStart: the notification area needs nothing that can be missing.
func canStart() (link, error) { return link{}, nil }

// linkClosed is false: Windows systray reports failures as log lines, never as a panic about a
// closed connection (see link).
func linkClosed(error) bool { return false }

// iconData is the icon as systray takes it on Windows: an ICO file (it writes the bytes to a
// temporary file and loads it with LoadImage(IMAGE_ICON), which takes no PNG), encoded from
// the PNG as Fyne's own tray does. Errors: png is not a decodable image.
func iconData(png []byte) ([]byte, error) {
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		return nil, fmt.Errorf("decode the tray icon: %w", err)
	}
	var buf bytes.Buffer
	if err := ico.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode the tray icon as ICO: %w", err)
	}
	return buf.Bytes(), nil
}
