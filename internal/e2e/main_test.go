//go:build unix || windows

package e2e

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/routinely/routinely/internal/torture"
)

// bin is the routinely binary under test, built once by TestMain ($ROUTINELY_E2E_BIN if set). The test binary re-executed
// with $ROUTINELY_E2E_HELPER set is a helper process instead (askowner_test.go).
var bin string

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "ask-owner" {
		os.Exit(askOwnerMain())
	}
	if bin = os.Getenv("ROUTINELY_E2E_BIN"); bin != "" {
		// A binary built elsewhere: `make test-windows` cross-builds routinely.exe and runs
		// this suite under Wine, where no Go toolchain is at hand.
		os.Exit(runTests(m))
	}
	dir, err := os.MkdirTemp("", "routinely-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	if bin, err = torture.Build(dir); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := runTests(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// runTests runs the tests and then checks that they leaked no goroutine; it returns the exit code.
func runTests(m *testing.M) int {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: leaked goroutines:", err)
			code = 1
		}
	}
	return code
}
