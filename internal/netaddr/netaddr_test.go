package netaddr

import "testing"

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "127.3.2.1": true, "::1": true,
		"": false, "0.0.0.0": false, "::": false, "192.168.1.10": false, "desktop.lan": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
}
