// Package locale sets LANGUAGE=en before Fyne reads the locale when the locale is C or POSIX,
// which Fyne cannot parse. It has no dependencies but os, so Go initialises it before Fyne's
// lang package (init order follows import paths once dependencies are ready).
package locale

import (
	"os"
	"strings"
)

func init() { Ensure() }

// Ensure sets LANGUAGE=en when LC_ALL/LANG name the C or POSIX locale (or nothing). A LANGUAGE
// already set is left alone.
func Ensure() {
	if os.Getenv("LANGUAGE") != "" {
		return
	}
	lang := os.Getenv("LC_ALL")
	if lang == "" {
		lang = os.Getenv("LC_MESSAGES")
	}
	if lang == "" {
		lang = os.Getenv("LANG")
	}
	base, _, _ := strings.Cut(lang, ".")
	if base == "" || base == "C" || base == "POSIX" {
		os.Setenv("LANGUAGE", "en")
	}
}
