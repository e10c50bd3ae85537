// Command crosscheck type-checks this module's packages for another system with cgo on, where
// that system's C toolchain is not at hand: `make lint` runs it for macOS, whose desktop build
// needs Apple's SDK, so that code behind a darwin build tag is at least compiled by the type
// checker on every change.
//
//	go build -o build/crosscheck ./tools/crosscheck
//	GOOS=darwin GOARCH=arm64 CGO_ENABLED=1 build/crosscheck -tags 'no_animations no_emoji' ./...
//
// (Build it first: `go run` would build it for GOOS too.)
//
// `go vet` cannot do this: it compiles the cgo dependencies (Fyne, GLFW, systray) first. crosscheck
// loads the packages with golang.org/x/tools/go/packages from source instead, which type-checks
// them even where cgo cannot run: the failed `import "C"` of each cgo file is reported once, and
// go/types reports nothing about the uses of C behind it. crosscheck drops those reports and
// prints every other error of the packages named (not of their dependencies). Uses of C names
// are thus not checked, so a mistake in cgo code itself still needs the real toolchain.
//
// It prints each error as FILE:LINE:COL: message and exits 1 if it printed any, 2 if the
// packages could not be loaded at all.
package main

import (
	"flag"
	"fmt"
	"go/build"
	"io"
	"os"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	tags := flag.String("tags", "", "build tags, as for go build")
	flag.Parse()
	n, err := check(flag.Args(), *tags, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		os.Exit(2)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "crosscheck: %d error(s) for %s/%s\n", n, build.Default.GOOS, build.Default.GOARCH)
		os.Exit(1)
	}
}

// check loads patterns for the GOOS, GOARCH and CGO_ENABLED of the environment with the build
// tags tags (space- or comma-separated), prints the errors of the packages patterns name to w,
// except the one a missing C toolchain causes (noCgo), and returns how many it printed. Errors:
// go list could not be run.
func check(patterns []string, tags string, w io.Writer) (int, error) {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, BuildFlags: []string{"-tags=" + tags}}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return 0, fmt.Errorf("load %v: %w", patterns, err)
	}
	n := 0
	for _, p := range pkgs {
		for _, e := range p.Errors {
			if !noCgo(e) {
				fmt.Fprintln(w, e)
				n++
			}
		}
	}
	return n, nil
}

// noCgo reports whether e only says that cgo could not process a file's `import "C"` (as
// go/types words it when go/packages has no cgo output for it).
func noCgo(e packages.Error) bool {
	return e.Kind == packages.TypeError && strings.HasSuffix(e.Msg, `could not import C (no metadata for C)`)
}
