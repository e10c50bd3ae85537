package main

import (
	"os/exec"
	"strings"
	"testing"
)

// Only this program links the NATS server: in any other process its package init would sample
// /proc/self/stat every second for the process's life, and its code slowed every command's start
// (docs/design.md#97-the-hub-process). The routinely binary, desktop and nogui builds, must
// not import it.
func TestOnlyTheHubProgramLinksTheServer(t *testing.T) {
	for _, tags := range []string{"nogui", "no_animations"} {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, "github.com/routinely/routinely").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -tags %s: %v\n%s", tags, err, out)
		}
		for _, p := range strings.Fields(string(out)) {
			if strings.HasPrefix(p, "github.com/nats-io/nats-server/") || p == "github.com/routinely/routinely/hub/hubserver" {
				t.Errorf("routinely (-tags %s) imports %s: `routinely hub` must hand over to routinely-hub instead", tags, p)
			}
		}
	}
}
