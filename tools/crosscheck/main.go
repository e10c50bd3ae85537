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
// `go vet` cannot do this: it compiles the cgo dependencies (Fyne, GLFW, systray) first, and so
// does golang.org/x/tools/go/packages. crosscheck instead lists the packages with `go list -deps`
// (which needs no compiler), parses every Go file the build would use, cgo files included, and
// type-checks them in dependency order with go/types, where `import "C"` declares an empty
// package (types.Config.FakeImportC). Dependencies are checked without their function bodies;
// only this module's packages are checked in full, and only their errors are reported. Uses of
// C names are not checked, so a mistake in cgo code itself still needs the real toolchain.
//
// Its arguments are go list's: build flags, then package patterns. It prints each error as
// FILE:LINE:COL: message, a package go list could not load as its error, and exits 1 if it
// printed any, 2 if go list itself failed.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// listed is the part of `go list -json` crosscheck reads.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	ImportMap  map[string]string // vendored or replaced import paths
	DepOnly    bool              // a dependency, not named by the patterns
	Error      *struct{ Err string }
}

func main() {
	pkgs, err := list(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		os.Exit(2)
	}
	if n := check(pkgs, os.Stdout); n > 0 {
		fmt.Fprintf(os.Stderr, "crosscheck: %d error(s) for %s/%s\n", n, build.Default.GOOS, build.Default.GOARCH)
		os.Exit(1)
	}
}

// list returns the packages args (go list's build flags and patterns) name and all their
// dependencies, each after the packages it imports (go list -deps prints them in that order).
// Errors: go list failed or printed something that is not its JSON.
func list(args []string) ([]listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-deps", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(out)
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			_ = cmd.Wait()
			return nil, fmt.Errorf("read go list's output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	return pkgs, nil
}

// check type-checks pkgs in order, prints the errors found in the packages that are not DepOnly
// to w and returns how many it printed (a file that does not parse counts as one).
func check(pkgs []listed, w io.Writer) int {
	fset := token.NewFileSet()
	checked := map[string]*types.Package{"unsafe": types.Unsafe}
	bad := 0
	for _, p := range pkgs {
		if p.ImportPath == "unsafe" {
			continue
		}
		report := func(err error) {
			if !p.DepOnly {
				fmt.Fprintln(w, err)
				bad++
			}
		}
		if p.Error != nil {
			report(fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err))
		}
		var files []*ast.File
		for _, name := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				report(err)
				continue
			}
			files = append(files, f)
		}
		conf := types.Config{
			FakeImportC:      true,
			IgnoreFuncBodies: p.DepOnly,
			Importer: importer(func(path string) (*types.Package, error) {
				if mapped, ok := p.ImportMap[path]; ok {
					path = mapped
				}
				if tp, ok := checked[path]; ok {
					return tp, nil
				}
				return nil, fmt.Errorf("%s is not among the listed packages", path)
			}),
			Error: report,
		}
		// Check reports each error through conf.Error and still returns the package, complete
		// as far as it could be checked, for the packages that import it.
		checked[p.ImportPath], _ = conf.Check(p.ImportPath, fset, files, nil)
	}
	return bad
}

// importer adapts a function to types.Importer.
type importer func(path string) (*types.Package, error)

func (f importer) Import(path string) (*types.Package, error) { return f(path) }
