//go:build unix

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// bin is the routinely binary under test, built once by TestMain. The test binary re-executed
// with $ROUTINELY_E2E_HELPER set is a helper process instead (askowner_test.go).
var bin string

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "ask-owner" {
		os.Exit(askOwnerMain())
	}
	dir, err := os.MkdirTemp("", "routinely-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "routinely")
	build := exec.Command("go", "build", "-tags", "nogui", "-o", bin, "github.com/routinely/routinely")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: build routinely: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: leaked goroutines:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
