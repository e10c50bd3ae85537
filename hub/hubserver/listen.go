package hubserver

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"slices"

	"github.com/nats-io/nats-server/v2/server"
)

// ReachableURLs returns the URLs (scheme://host:port) devices can dial for a hub listening on
// host and port. For a named host or address that is the one URL. For an unspecified host ("",
// 0.0.0.0, ::), to which no device can connect, it is one URL per address of this machine's
// network interfaces that are up and not loopback (IPv4 first; link-local addresses left out,
// as they need a zone), then one with the host name; Go listens on both IPv4 and IPv6 for
// either unspecified address (net.Listen). When nothing is found, the URL with host as given.
func ReachableURLs(scheme, host, port string) []string {
	url := func(h string) string { return scheme + "://" + net.JoinHostPort(h, port) }
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return []string{url(host)}
	}
	var v4, v6 []string
	ifaces, _ := net.Interfaces() // none found: the host name below still helps
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() || ipn.IP.IsUnspecified() {
				continue
			}
			if ipn.IP.To4() != nil {
				v4 = append(v4, url(ipn.IP.String()))
			} else {
				v6 = append(v6, url(ipn.IP.String()))
			}
		}
	}
	urls := slices.Compact(append(v4, v6...))
	if name, err := os.Hostname(); err == nil && name != "" {
		urls = append(urls, url(name))
	}
	if len(urls) == 0 {
		urls = []string{url(host)}
	}
	return urls
}

// loadTLS returns the server's TLS configuration for the PEM files cert and key, or nil when
// both are "". Errors: ErrBadTLS (wrapped) for one without the other or a pair that does not
// load; ErrUnsafeStore (wrapped) for a key file other users can read or that is not yours.
func loadTLS(cert, key string) (*tls.Config, error) {
	switch {
	case cert == "" && key == "":
		return nil, nil
	case cert == "" || key == "":
		return nil, fmt.Errorf("%w: give both --tls-cert and --tls-key", ErrBadTLS)
	}
	fi, err := os.Stat(key)
	if err != nil {
		return nil, fmt.Errorf("%w: --tls-key: %w", ErrBadTLS, err)
	}
	if err := private(fi); err != nil {
		return nil, fmt.Errorf("%w: the TLS key %s is %v (mode %04o): chmod 600 %s", ErrUnsafeStore, key, err, fi.Mode().Perm(), key)
	}
	cfg, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cert, KeyFile: key})
	if err != nil {
		return nil, fmt.Errorf("%w: %s and %s: %w", ErrBadTLS, cert, key, err)
	}
	return cfg, nil
}
