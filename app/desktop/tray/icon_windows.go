//go:build !nogui

package tray

import (
	"bytes"
	"image"
	_ "image/png" // the icons we are given are PNG

	"github.com/fyne-io/image/ico"
)

// osIcon converts a PNG to the ICO that systray's Windows code loads (as Fyne's toOSIcon does).
func osIcon(png []byte) ([]byte, error) {
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := ico.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
