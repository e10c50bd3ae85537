package autostart

import "runtime"

// Hint is one line telling the user what to do about the status, or "" when nothing is needed:
// for DisabledByUser, where the switch that turned it off lives (and that only they flip it back);
// for an entry that starts another binary, how to point it here.
func (s Status) Hint() string { return hintFor(runtime.GOOS, s) }

// hintFor is Hint for the operating system goos (a runtime.GOOS value), so every OS's wording
// is tested anywhere.
func hintFor(goos string, s Status) string {
	switch {
	case s.State == DisabledByUser && goos == "windows":
		return "Turned off in Task Manager > Startup apps (or Settings > Apps > Startup); turn Routinely on there."
	case s.State == DisabledByUser && goos == "darwin":
		return "Turned off for launchd (System Settings > General > Login Items); allow Routinely there, then run 'routinely autostart enable'."
	case s.State == DisabledByUser:
		return "Turned off in the entry (Hidden=true or X-GNOME-Autostart-enabled=false); 'routinely autostart enable' turns it back on."
	case s.State == Enabled && !s.PointsHere:
		return "The entry starts another binary; 'routinely autostart enable' points it at this one."
	}
	return ""
}
