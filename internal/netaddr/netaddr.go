// Package netaddr holds the one rule for whether a listen address lets other machines connect,
// shared by `routinely hub` (hub/hubserver) and `routinely dev-serve` (app/cli), which warn when
// it does.
package netaddr

import "net"

// Loopback reports whether host (of a listen address, without its port) is this machine only:
// "localhost" or a loopback address. Any other name or address, and the unspecified ones ("",
// 0.0.0.0, ::), let other machines connect.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
