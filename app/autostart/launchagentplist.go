package autostart

import (
	"fmt"
	"strings"

	"howett.net/plist"
)

// This file renders and reads LaunchAgent property lists per launchd.plist(5);
// launchagent.go does the file and launchd work.

// agentPlist is the LaunchAgent we write; keys and meanings from launchd.plist(5). There is no
// KeepAlive: a Quit from the tray must stay quit until the next login.
type agentPlist struct {
	Label                  string   `plist:"Label"`
	ProgramArguments       []string `plist:"ProgramArguments"`
	RunAtLoad              bool     `plist:"RunAtLoad"`
	LimitLoadToSessionType string   `plist:"LimitLoadToSessionType"` // Aqua: only in a GUI login
	ProcessType            string   `plist:"ProcessType"`            // Interactive: app-like limits
}

// agentOnDisk is what we read back from any LaunchAgent file, ours or edited by hand.
type agentOnDisk struct {
	Label            string   `plist:"Label"`
	Program          string   `plist:"Program"`
	ProgramArguments []string `plist:"ProgramArguments"`
	// Disabled (launchd.plist(5): "tells launchctl that it should not submit this job") is how
	// a user or a cleanup tool turns the agent off inside the file.
	Disabled bool `plist:"Disabled"`
}

// renderLaunchAgent returns the XML plist (launchd.plist(5)) that starts target with args at
// login. The encoder does the XML escaping of &, <, > and quotes.
func renderLaunchAgent(target string, args []string) ([]byte, error) {
	argv := append([]string{target}, args...)
	for _, a := range argv {
		if strings.ContainsRune(a, 0) {
			return nil, fmt.Errorf("%w: NUL byte in %q", ErrUnrepresentable, a)
		}
	}
	out, err := plist.MarshalIndent(agentPlist{
		Label:                  AppID,
		ProgramArguments:       argv,
		RunAtLoad:              true,
		LimitLoadToSessionType: "Aqua",
		ProcessType:            "Interactive",
	}, plist.XMLFormat, "\t")
	if err != nil {
		return nil, fmt.Errorf("autostart: encode LaunchAgent: %w", err)
	}
	return out, nil
}

// parseLaunchAgent decodes a LaunchAgent plist in any format launchd accepts.
func parseLaunchAgent(data []byte) (agentOnDisk, error) {
	var a agentOnDisk
	if _, err := plist.Unmarshal(data, &a); err != nil {
		return a, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return a, nil
}

// args are the arguments launchd passes after argv[0]: ProgramArguments[1:] whether or not
// Program is set (launchd.plist(5): with Program, ProgramArguments is still the whole argv).
func (a agentOnDisk) args() []string {
	if len(a.ProgramArguments) > 1 {
		return a.ProgramArguments[1:]
	}
	return nil
}

// target is the program launchd starts: Program if set, else ProgramArguments[0]
// (launchd.plist(5), "Program" and "ProgramArguments").
func (a agentOnDisk) target() string {
	if a.Program != "" {
		return a.Program
	}
	if len(a.ProgramArguments) > 0 {
		return a.ProgramArguments[0]
	}
	return ""
}
