//go:build ignore

// Command gen draws Routinely's PNG icons into assets/ (run from the repository root:
// `go run ./assets/gen`). The icons are drawn from signed distances with 4×4 supersampling,
// so they are reproducible byte for byte and need no image editor.
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
)

// palette is one look of the icon: the tile gradient, the clock face and the check.
type palette struct {
	tileTop, tileBottom color.NRGBA
	face, ring, check   color.NRGBA
	badge               bool
}

var (
	owning = palette{
		tileTop:    color.NRGBA{0x2b, 0x8a, 0xd8, 0xff},
		tileBottom: color.NRGBA{0x1b, 0x5f, 0xa8, 0xff},
		face:       color.NRGBA{0xff, 0xff, 0xff, 0xff},
		ring:       color.NRGBA{0xd7, 0xe9, 0xf8, 0xff},
		check:      color.NRGBA{0x1f, 0xa8, 0x5a, 0xff},
	}
	standby = palette{
		tileTop:    color.NRGBA{0x9a, 0xa0, 0xa6, 0xff},
		tileBottom: color.NRGBA{0x74, 0x7a, 0x80, 0xff},
		face:       color.NRGBA{0xf1, 0xf3, 0xf4, 0xff},
		ring:       color.NRGBA{0xdc, 0xdf, 0xe1, 0xff},
		check:      color.NRGBA{0x80, 0x86, 0x8b, 0xff},
	}
	warning = palette{
		tileTop:    owning.tileTop,
		tileBottom: owning.tileBottom,
		face:       owning.face,
		ring:       owning.ring,
		check:      owning.check,
		badge:      true,
	}
)

func main() {
	out := "assets"
	write(filepath.Join(out, "icon.png"), draw(512, owning))
	write(filepath.Join(out, "tray-owning.png"), draw(64, owning))
	write(filepath.Join(out, "tray-standby.png"), draw(64, standby))
	write(filepath.Join(out, "tray-warning.png"), draw(64, warning))
}

func write(path string, img image.Image) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// draw renders the icon at size px; all geometry is in unit coordinates (0..1).
func draw(size int, p palette) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const ss = 4
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var r, g, b, a float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					u := (float64(x) + (float64(sx)+0.5)/ss) / float64(size)
					v := (float64(y) + (float64(sy)+0.5)/ss) / float64(size)
					c := shade(u, v, p)
					al := float64(c.A) / 255
					r += float64(c.R) * al
					g += float64(c.G) * al
					b += float64(c.B) * al
					a += al
				}
			}
			n := float64(ss * ss)
			if a == 0 {
				continue
			}
			img.SetNRGBA(x, y, color.NRGBA{
				R: uint8(math.Round(r / a)), G: uint8(math.Round(g / a)), B: uint8(math.Round(b / a)),
				A: uint8(math.Round(255 * a / n)),
			})
		}
	}
	return img
}

// shade returns the colour of one sample point, painting back to front.
func shade(u, v float64, p palette) color.NRGBA {
	var c color.NRGBA
	if roundedSquare(u, v, 0.04, 0.96, 0.2) <= 0 {
		c = lerp(p.tileTop, p.tileBottom, v)
	}
	// Clock face: a white disc with a soft ring, hour ticks at 12, 3, 6, 9.
	cx, cy, rad := 0.5, 0.5, 0.33
	d := math.Hypot(u-cx, v-cy)
	if d <= rad+0.035 {
		c = p.ring
	}
	if d <= rad {
		c = p.face
	}
	for i := 0; i < 4; i++ {
		ang := float64(i) * math.Pi / 2
		x0, y0 := cx+math.Sin(ang)*rad*0.78, cy-math.Cos(ang)*rad*0.78
		x1, y1 := cx+math.Sin(ang)*rad*0.92, cy-math.Cos(ang)*rad*0.92
		if segment(u, v, x0, y0, x1, y1) <= 0.018 {
			c = p.ring
		}
	}
	// The hands form a check mark: the short hand down-left, the long hand up-right.
	if segment(u, v, 0.36, 0.50, 0.46, 0.61) <= 0.045 || segment(u, v, 0.46, 0.61, 0.67, 0.37) <= 0.045 {
		c = p.check
	}
	if p.badge {
		bx, by, br := 0.76, 0.76, 0.22
		bd := math.Hypot(u-bx, v-by)
		if bd <= br+0.035 {
			c = color.NRGBA{0xff, 0xff, 0xff, 0xff}
		}
		if bd <= br {
			c = color.NRGBA{0xf5, 0xa6, 0x23, 0xff}
			// Exclamation mark: a bar and a dot.
			if segment(u, v, bx, by-0.12, bx, by+0.03) <= 0.032 || math.Hypot(u-bx, v-(by+0.11)) <= 0.035 {
				c = color.NRGBA{0x3a, 0x2a, 0x00, 0xff}
			}
		}
	}
	return c
}

// roundedSquare is the signed distance to a square [lo,hi]² with corner radius r.
func roundedSquare(u, v, lo, hi, r float64) float64 {
	c := (lo + hi) / 2
	h := (hi-lo)/2 - r
	qx, qy := math.Abs(u-c)-h, math.Abs(v-c)-h
	return math.Hypot(math.Max(qx, 0), math.Max(qy, 0)) + math.Min(math.Max(qx, qy), 0) - r
}

// segment is the distance from (u,v) to the segment (x0,y0)-(x1,y1).
func segment(u, v, x0, y0, x1, y1 float64) float64 {
	dx, dy := x1-x0, y1-y0
	t := ((u-x0)*dx + (v-y0)*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	return math.Hypot(u-(x0+t*dx), v-(y0+t*dy))
}

func lerp(a, b color.NRGBA, t float64) color.NRGBA {
	m := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + (float64(y)-float64(x))*t)) }
	return color.NRGBA{m(a.R, b.R), m(a.G, b.G), m(a.B, b.B), m(a.A, b.A)}
}
