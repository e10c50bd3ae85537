package config

import (
	"crypto/x509"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/routinely/routinely/internal/atomicfile"
)

// maxCABytes bounds ca_file: a few certificates, not a system bundle.
const maxCABytes = 1 << 20

// ReadCA returns the certificates of ca_file, which a hub's TLS certificate must chain to, or
// nil (the system's roots) without ca_file. Whoever can change that file can put a hub of
// theirs in the middle, so it is vetted like a secret: it must lie inside one of dirs (the
// profile's config and state directories, symbolic links resolved), be a regular file, not a
// symbolic link itself, owned by you or root and not writable by group or others (on Unix),
// and hold at least one PEM certificate. Errors: ErrHubCA wrapped with what is wrong and what
// to do.
func (h *Hub) ReadCA(dirs ...string) (*x509.CertPool, error) {
	if h.CAFile == "" {
		return nil, nil
	}
	path, err := insideDirs(h.CAFile, dirs)
	if err != nil {
		return nil, err
	}
	data, fi, err := atomicfile.Read(path, maxCABytes)
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

// insideDirs returns file with the symbolic links of its directory resolved, when that lies
// inside one of dirs (resolved too). Errors: ErrHubCA, wrapped, naming dirs, when it lies in
// none or its directory cannot be resolved.
func insideDirs(file string, dirs []string) (string, error) {
	parent, err := filepath.EvalSymlinks(filepath.Dir(file))
	if err != nil {
		return "", fmt.Errorf("%w: ca_file %s: %w", ErrHubCA, file, err)
	}
	path := filepath.Join(parent, filepath.Base(file))
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(real, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return path, nil
		}
	}
	return "", fmt.Errorf("%w: ca_file %s is outside this profile's directories (%s): copy the hub's certificate into one of them, e.g. beside routines.toml", ErrHubCA, file, strings.Join(dirs, ", "))
}
