package cli

import (
	"net"
	"strconv"
	"strings"
	"time"
)

// x11SocketDir is where a local X server listens, one socket per display number.
var x11SocketDir = "/tmp/.X11-unix"

// displayReachable reports whether the local X display named by display (":N", ":N.S" or
// "unix:N", the syntax of X(7) "DISPLAY NAMES") accepts connections on its socket
// (x11SocketDir/XN, or the Linux abstract socket of the same name), waiting at most 1 s.
// Remote displays ("host:N", such as SSH forwarding on localhost:10) and names it does not
// understand are assumed reachable: only the X library can judge those. Why: GLFW panics when
// it cannot open the display, and a person deserves a sentence instead.
func displayReachable(display string) bool {
	host, rest, ok := strings.Cut(display, ":")
	if !ok || (host != "" && host != "unix") {
		return true
	}
	num, _, _ := strings.Cut(rest, ".")
	if _, err := strconv.Atoi(num); err != nil {
		return true
	}
	path := x11SocketDir + "/X" + num
	for _, addr := range []string{path, "@" + path} {
		if c, err := net.DialTimeout("unix", addr, time.Second); err == nil {
			_ = c.Close()
			return true
		}
	}
	return false
}
