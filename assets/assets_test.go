package assets

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

func decode(t *testing.T, name string, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", name, err)
	}
	return img
}

func TestIconsAreSquarePNGsOfTheRightSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		size int
	}{
		{"AppIcon", AppIcon, 512},
		{"TrayOwning", TrayOwning, 64},
		{"TrayStandby", TrayStandby, 64},
		{"TrayWarning", TrayWarning, 64},
	} {
		b := decode(t, tc.name, tc.data).Bounds()
		if b.Dx() != tc.size || b.Dy() != tc.size {
			t.Errorf("%s is %dx%d, want %dx%d", tc.name, b.Dx(), b.Dy(), tc.size, tc.size)
		}
	}
}

// The three tray looks must be told apart at a glance: standby is grey, warning has an
// amber badge in the bottom-right corner.
func TestTrayVariantsDiffer(t *testing.T) {
	own := decode(t, "TrayOwning", TrayOwning)
	stb := decode(t, "TrayStandby", TrayStandby)
	wrn := decode(t, "TrayWarning", TrayWarning)

	// A point on the tile outside the clock face: blue when owning, grey on standby.
	r, g, b, _ := own.At(8, 32).RGBA()
	if !(b > r+0x2000 && b > g) {
		t.Errorf("owning tile is not blue: r=%x g=%x b=%x", r, g, b)
	}
	r, g, b, _ = stb.At(8, 32).RGBA()
	if max(r, g, b)-min(r, g, b) > 0x1000 {
		t.Errorf("standby tile is not grey: r=%x g=%x b=%x", r, g, b)
	}
	// The badge centre area (left of the exclamation mark) is amber only on the warning icon.
	r, g, b, _ = wrn.At(44, 48).RGBA()
	if !(r > 0xe000 && g > 0x8000 && b < 0x5000) {
		t.Errorf("warning badge is not amber: r=%x g=%x b=%x", r, g, b)
	}
	r, g, b, _ = own.At(44, 48).RGBA()
	if r > 0xe000 && b < 0x5000 {
		t.Errorf("owning icon has an amber badge: r=%x g=%x b=%x", r, g, b)
	}
	// Corners are transparent (rounded tile).
	if _, _, _, a := own.At(0, 0).RGBA(); a != 0 {
		t.Errorf("corner alpha = %x, want transparent", a)
	}
}
