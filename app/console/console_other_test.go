//go:build !windows

package console

import (
	"os"
	"testing"
)

func TestAttachLeavesStreamsAloneOffWindows(t *testing.T) {
	out, errf, in := os.Stdout, os.Stderr, os.Stdin
	if Attach() {
		t.Fatal("Attach reported a console off Windows")
	}
	if os.Stdout != out || os.Stderr != errf || os.Stdin != in {
		t.Fatal("Attach replaced the standard streams off Windows")
	}
}
