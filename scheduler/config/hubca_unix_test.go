//go:build !windows

package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA returns the PEM of a self-signed certificate.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test hub"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// ReadCA takes ca_file only from inside routines.toml's directory (not even the state
// directory, as token_file), as a regular file nobody else can change, holding a certificate;
// each refusal says what to do.
func TestReadCAVetsTheFile(t *testing.T) {
	config, state, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	ca := testCA(t)
	good := writeFile(t, filepath.Join(config, "hub.crt"), ca)
	inState := writeFile(t, filepath.Join(state, "hub.crt"), ca)
	outside := writeFile(t, filepath.Join(elsewhere, "hub.crt"), ca)
	writable := writeFile(t, filepath.Join(config, "writable.crt"), ca)
	if err := os.Chmod(writable, 0o666); err != nil {
		t.Fatal(err)
	}
	link := symlink(t, outside, filepath.Join(config, "link.crt"))
	dirLink := symlink(t, elsewhere, filepath.Join(config, "elsewhere"))
	empty := writeFile(t, filepath.Join(config, "empty.crt"), "not a certificate\n")

	for _, c := range []struct {
		file, want string
	}{
		{good, ""},
		{inState, "outside"},
		{outside, "outside"},
		{filepath.Join(dirLink, "hub.crt"), "outside"},
		{link, "symbolic link"},
		{writable, "world-writable"},
		{empty, "no PEM certificate"},
		{filepath.Join(config, "missing.crt"), "copy the hub's certificate"},
	} {
		h := &Hub{CAFile: c.file, dir: config}
		pool, err := h.ReadCA()
		switch {
		case c.want == "" && (err != nil || pool == nil):
			t.Errorf("ReadCA(%s) = %v, %v; want the certificate", c.file, pool, err)
		case c.want != "" && (!errors.Is(err, ErrHubCA) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("ReadCA(%s) = %v; want ErrHubCA saying %q", c.file, err, c.want)
		}
	}
	if pool, err := (&Hub{dir: config}).ReadCA(); pool != nil || err != nil {
		t.Errorf("ReadCA without ca_file = %v, %v; want nil, nil (the system's roots)", pool, err)
	}
}
