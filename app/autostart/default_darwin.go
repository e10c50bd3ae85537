package autostart

import (
	"fmt"
	"os"
	"os/exec"
)

// Default is the LaunchAgent in ~/Library/LaunchAgents, also honouring the user's switch in
// launchd (System Settings > General > Login Items, `launchctl disable`).
func Default() Manager {
	return Manager{b: launchAgentBackend{userDisabled: launchctlDisabled}}
}

// launchctlDisabled asks launchd whether label is disabled in the user's GUI domain.
func launchctlDisabled(label string) (bool, error) {
	out, err := exec.Command("launchctl", "print-disabled", fmt.Sprintf("gui/%d", os.Getuid())).Output()
	if err != nil {
		return false, fmt.Errorf("autostart: launchctl print-disabled: %w", err)
	}
	return parsePrintDisabled(out, label), nil
}
