package torture

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Build builds the nogui routinely binary and, beside it, the routinely-hub program that
// `routinely hub` hands over to, into dir, with the go command on PATH. It returns the
// routinely binary's path. Errors: a failed build, with the compiler's output.
func Build(dir string) (string, error) {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	bin := filepath.Join(dir, "routinely"+exe)
	for _, b := range []struct{ out, pkg string }{
		{bin, "github.com/routinely/routinely"},
		{filepath.Join(dir, "routinely-hub"+exe), "github.com/routinely/routinely/cmd/routinely-hub"},
	} {
		build := exec.Command("go", "build", "-tags", "nogui", "-o", b.out, b.pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build %s: %w\n%s", b.pkg, err, out)
		}
	}
	return bin, nil
}
