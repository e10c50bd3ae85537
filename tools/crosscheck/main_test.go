package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A module with a cgo file for macOS and a file for Linux, each with one type error: checked
// for darwin, the macOS file's error is reported (its use of C is not), the Linux file is not
// checked, and a dependency's error is not reported.
func TestReportsTheTargetsTypeErrorsOnly(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.24\n",
		"tray_darwin.go": "package m\n\n// #include <Cocoa/Cocoa.h>\nimport \"C\"\n\nimport \"example.com/m/dep\"\n\n" +
			"func Show() { C.showMenu(); _ = dep.X }\n\nvar wrong int = \"on darwin\"\n",
		"tray_linux.go": "package m\n\nvar wrong int = \"on linux\"\n",
		"dep/dep.go":    "package dep\n\nvar X = 1\n\nvar wrong int = \"in a dependency\"\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("GOOS", "darwin")
	t.Setenv("GOARCH", "arm64")
	t.Setenv("CGO_ENABLED", "1")
	t.Setenv("GOFLAGS", "-mod=mod")

	var out strings.Builder
	n, err := check([]string{"."}, "", &out)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || !strings.Contains(out.String(), "tray_darwin.go:10:") || !strings.Contains(out.String(), `"on darwin"`) {
		t.Errorf("check reported %d error(s):\n%s\nwant only the one in tray_darwin.go, line 10", n, out.String())
	}
}
