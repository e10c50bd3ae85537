//go:build unix

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// selfSigned returns the PEM of a certificate for 127.0.0.1, signed by itself (so it is its
// own CA, as a hub's own certificate would be), and of its private key.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "routinely test hub"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
}

// hubDiagnosis returns the message of status's hub-unreachable diagnosis, or "".
func hubDiagnosis(s statusOut) string {
	for _, d := range s.Diagnoses {
		if d.Kind == "hub-unreachable" {
			return d.Message
		}
	}
	return ""
}

// A hub started with --tls-cert and --tls-key speaks only TLS and prints a tls:// URL; a
// device with the certificate as [hub] ca_file connects, one without it is refused and status
// says that it does not trust the hub's certificate and to set ca_file. A ca_file outside the
// profile's directories stops the owner (78).
func TestHubTLSDevicesVerifyTheCertificate(t *testing.T) {
	certPEM, keyPEM := selfSigned(t)
	dir := t.TempDir()
	cert := writeFile(t, filepath.Join(dir, "hub.crt"), certPEM, 0o644)
	key := writeFile(t, filepath.Join(dir, "hub.key"), keyPEM, 0o600)
	h := startHubProc(t, filepath.Join(t.TempDir(), "hub"), "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(h.url, "tls://127.0.0.1:") {
		t.Fatalf("hub with TLS printed URL %s, want tls://127.0.0.1:PORT", h.url)
	}
	if out := h.stdout.String(); !strings.Contains(out, "ca_file") {
		t.Fatalf("hub with TLS does not say to set ca_file:\n%s", out)
	}

	trusting := deviceHome(t, h, "laptop", "ca_file = \"hub.crt\"\n"+hourly)
	writeFile(t, filepath.Join(trusting, "hub.crt"), certPEM, 0o644)
	doubting := deviceHome(t, h, "desktop", hourly)
	a := start(t, trusting, "daemon")
	b := start(t, doubting, "daemon")
	waitStatus(t, trusting, "connected to the hub over TLS", func(s statusOut) bool { return s.Hub != nil && s.Hub.Connected })
	s := waitStatus(t, doubting, "the hub's certificate refused", func(s statusOut) bool { return s.Hub != nil && s.Hub.Refused })
	if msg := hubDiagnosis(s); !strings.Contains(msg, "does not trust the hub's TLS certificate") || !strings.Contains(msg, "ca_file") {
		t.Fatalf("status of a device without ca_file says %q, want that it does not trust the certificate and to set ca_file", msg)
	}
	for _, p := range []*proc{a, b} {
		p.signal(syscall.SIGTERM)
		if code := p.wait(cmdTimeout); code != 0 {
			t.Fatalf("daemon: exit %d on SIGTERM", code)
		}
	}

	outside := deviceHome(t, h, "studio", "ca_file = "+quote(cert)+"\n"+hourly)
	_, stderr, code := run(t, outside, "daemon")
	if code != 78 || !strings.Contains(stderr, "outside") {
		t.Fatalf("daemon with ca_file outside its profile: exit %d, stderr:\n%s\nwant 78 saying it is outside", code, stderr)
	}
}

// quote is s as a TOML basic string.
func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// `routinely hub --listen 0.0.0.0:…` warns on stderr that other machines can connect and what
// to do, and prints URLs devices can dial (never 0.0.0.0); on 127.0.0.1 it says nothing of the
// kind. (Bound on every interface, but no traffic goes anywhere.)
func TestHubWarnsWhenOtherMachinesCanConnect(t *testing.T) {
	open := startHubProc(t, filepath.Join(t.TempDir(), "hub"), "0.0.0.0:0")
	stderr, stdout := open.stderr.String(), open.stdout.String()
	for _, want := range []string{"Warning: the hub listens on", "other machines can connect", "clear text", "--tls-cert"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("hub on 0.0.0.0: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "devices reach it at one of:") || strings.Contains(stdout, "url = \"nats://0.0.0.0") {
		t.Errorf("hub on 0.0.0.0 does not print addresses devices can reach:\n%s", stdout)
	}
	open.signal(syscall.SIGTERM)
	if code := open.wait(cmdTimeout); code != 0 {
		t.Fatalf("hub: exit %d on SIGTERM", code)
	}

	local := startHubProc(t, filepath.Join(t.TempDir(), "hub"), "127.0.0.1:0")
	if stderr := local.stderr.String(); strings.Contains(stderr, "Warning") {
		t.Errorf("hub on 127.0.0.1 warns:\n%s", stderr)
	}
	if !strings.Contains(local.stdout.String(), "url = \""+local.url+"\"") {
		t.Errorf("hub on 127.0.0.1 does not give its URL for routines.toml:\n%s", local.stdout.String())
	}
}

// After the hub's token is made anew, a device that has the old one is refused, and status
// says that authentication failed, which file to copy the new token into, and not EOF or
// "once it is back"; a device started with a wrong token is told the same.
func TestHubRefusedTokenSaysAuthenticationFailed(t *testing.T) {
	store := filepath.Join(t.TempDir(), "hub")
	h := startHubProc(t, store, "127.0.0.1:0")
	home := deviceHome(t, h, "laptop", hourly)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	waitStatus(t, home, "connected to the hub", func(s statusOut) bool { return s.Hub != nil && s.Hub.Connected })

	h.signal(syscall.SIGTERM)
	if code := h.wait(cmdTimeout); code != 0 {
		t.Fatalf("hub: exit %d on SIGTERM", code)
	}
	if err := os.Remove(filepath.Join(store, "hub.token")); err != nil {
		t.Fatal(err)
	}
	h2 := startHubProc(t, store, strings.TrimPrefix(h.url, "nats://"))
	if h2.token == h.token {
		t.Fatal("the hub kept its token")
	}
	wrong := deviceHome(t, h2, "desktop", hourly)
	writeFile(t, filepath.Join(wrong, "hub.token"), []byte("not-the-token\n"), 0o600)
	w := start(t, wrong, "daemon")

	for _, dev := range []struct {
		home string
		p    *proc
	}{{home, d}, {wrong, w}} {
		s := waitStatus(t, dev.home, "the hub refusing the token", func(s statusOut) bool { return s.Hub != nil && s.Hub.Refused })
		msg := hubDiagnosis(s)
		tokenFile := filepath.Join(dev.home, "hub.token")
		if !strings.Contains(msg, "authentication failed") || !strings.Contains(msg, "copy the hub's current token") ||
			!strings.Contains(msg, tokenFile) || strings.Contains(msg, "EOF") || strings.Contains(msg, "once it is back") {
			t.Errorf("status of a device the hub refuses says %q, want authentication failed and to copy the token into %s", msg, tokenFile)
		}
		if out, _, _ := run(t, dev.home, "status"); !strings.Contains(out, "authentication failed") {
			t.Errorf("status (text) does not say authentication failed:\n%s", out)
		}
		dev.p.signal(syscall.SIGTERM)
		if code := dev.p.wait(cmdTimeout); code != 0 {
			t.Fatalf("daemon: exit %d on SIGTERM", code)
		}
	}
}
