package autostart

import "runtime"

// Hint is one line telling the user what to do about the status, or "" when nothing is needed:
// for DisabledByUser, where the switch that turned it off lives (and that only they flip it back);
// for an entry that starts another binary or another profile, how to point it here. enable is
// the command that enables the item for this binary and profile as the user would type it (e.g.
// "build/routinely --home /srv/p autostart enable"); "" when this binary cannot (a nogui build),
// and the hints then name no command.
func (s Status) Hint(enable string) string { return hintFor(runtime.GOOS, s, enable) }

// hintFor is Hint for the operating system goos (a runtime.GOOS value), so every OS's wording
// is tested anywhere.
func hintFor(goos string, s Status, enable string) string {
	run := func(what string) string {
		if enable == "" {
			return ""
		}
		return " '" + enable + "' " + what + "."
	}
	switch {
	case s.State == DisabledByUser && goos == "windows":
		return "Turned off in Task Manager > Startup apps (or Settings > Apps > Startup); turn Routinely on there."
	case s.State == DisabledByUser && goos == "darwin":
		return "Turned off for launchd (System Settings > General > Login Items); allow Routinely there." + run("then writes the item again")
	case s.State == DisabledByUser:
		return "Turned off in the entry (Hidden=true or X-GNOME-Autostart-enabled=false)." + run("turns it back on")
	case s.State == Enabled && !s.PointsHere:
		return "The entry starts another binary or profile." + run("points it at this one")
	}
	return ""
}
