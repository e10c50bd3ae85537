package config

import (
	"crypto/x509"
	"fmt"

	"github.com/routinely/routinely/internal/atomicfile"
)

// maxCABytes bounds ca_file: a few certificates, not a system bundle.
const maxCABytes = 1 << 20

// ReadCA returns the certificates of ca_file, which a hub's TLS certificate must chain to, or
// nil (the system's roots) without ca_file. Whoever can change that file can put a hub of
// theirs in the middle, so it is vetted like a secret: it must lie inside routines.toml's
// directory with symbolic links resolved (secretInPlace, the token file's rule), be a regular
// file, not a symbolic link itself, owned by you or root and not writable by group or others
// (on Unix), and hold at least one PEM certificate. Errors: ErrHubCA wrapped with what is wrong
// and what to do.
func (h *Hub) ReadCA() (*x509.CertPool, error) {
	if h.CAFile == "" {
		return nil, nil
	}
	if err := h.secretInPlace(h.CAFile, "ca_file", "the hub's certificate"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHubCA, err)
	}
	data, fi, err := atomicfile.Read(h.CAFile, maxCABytes)
	if err != nil {
		return nil, fmt.Errorf("%w: ca_file %s: %w (copy the hub's certificate there)", ErrHubCA, h.CAFile, err)
	}
	if why := caChangeable(fi); why != "" {
		return nil, fmt.Errorf("%w: ca_file %s %s, so another user could make this device trust their own hub: make it yours and chmod 644 %s", ErrHubCA, h.CAFile, why, h.CAFile)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%w: ca_file %s holds no PEM certificate (-----BEGIN CERTIFICATE-----): copy the hub's certificate there", ErrHubCA, h.CAFile)
	}
	return pool, nil
}
