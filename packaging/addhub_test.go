package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fyneTarball writes a tarball laid out as `fyne package -os linux` (fyne.io/tools v1.7.4) lays
// out build/Routinely.tar.xz: routinely/Makefile (testdata/fyne-tarball.Makefile, the one it
// generated for this app) and routinely/usr/local/{bin,share/...}. withMakefile false leaves
// the Makefile out. It returns the tarball's path.
func fyneTarball(t *testing.T, withMakefile bool) string {
	t.Helper()
	root := t.TempDir()
	top := filepath.Join(root, "routinely")
	files := map[string]string{
		"usr/local/bin/routinely":                               "#!/bin/sh\necho routinely\n",
		"usr/local/share/applications/io.routinely.app.desktop": "[Desktop Entry]\nType=Application\nName=Routinely\nExec=routinely\nIcon=io.routinely.app\n",
		"usr/local/share/pixmaps/io.routinely.app.png":          "png",
	}
	if withMakefile {
		mk, err := os.ReadFile(filepath.Join("testdata", "fyne-tarball.Makefile"))
		if err != nil {
			t.Fatal(err)
		}
		files["Makefile"] = string(mk)
	}
	for name, data := range files {
		p := filepath.Join(top, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tarball := filepath.Join(t.TempDir(), "Routinely.tar.xz")
	if out, err := exec.Command("tar", "-cJf", tarball, "-C", root, "routinely").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	return tarball
}

// addHub runs packaging/linux/add-hub.sh on tarball with a stand-in hub program.
func addHub(t *testing.T, tarball string) (string, error) {
	t.Helper()
	hub := filepath.Join(t.TempDir(), "routinely-hub")
	if err := os.WriteFile(hub, []byte("#!/bin/sh\necho hub\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join("linux", "add-hub.sh"), tarball, hub).CombinedOutput()
	return string(out), err
}

// `make package` puts routinely-hub beside routinely in fyne's tarball, and the tarball's own
// Makefile installs and uninstalls it with routinely (add-hub.sh checks that itself; here the
// tarball is unpacked and installed again, as a person would).
func TestPackageTarballCarriesTheHubProgram(t *testing.T) {
	tarball := fyneTarball(t, true)
	if out, err := addHub(t, tarball); err != nil {
		t.Fatalf("add-hub.sh: %v\n%s", err, out)
	}
	dir := t.TempDir()
	if out, err := exec.Command("tar", "-xJf", tarball, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar -x: %v\n%s", err, out)
	}
	dest := t.TempDir()
	install := exec.Command("make", "-C", filepath.Join(dir, "routinely"), "install", "DESTDIR="+dest, "PREFIX=/usr/local")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for _, p := range []string{"routinely", "routinely-hub"} {
		fi, err := os.Stat(filepath.Join(dest, "usr/local/bin", p))
		if err != nil || fi.Mode().Perm()&0o111 == 0 {
			t.Errorf("after make install, bin/%s: %v (mode %v), want an executable", p, err, fi)
		}
	}
	hub, err := exec.Command(filepath.Join(dest, "usr/local/bin/routinely-hub")).Output()
	if err != nil || !bytes.Equal(hub, []byte("hub\n")) {
		t.Errorf("the installed routinely-hub ran: %q, %v; want the hub program given to add-hub.sh", hub, err)
	}
}

// A tarball not laid out as add-hub.sh expects (fyne changed its Makefile away) fails the step
// with a message saying so, and is left as it was.
func TestAddHubRefusesAnUnexpectedTarball(t *testing.T) {
	tarball := fyneTarball(t, false)
	before, err := os.ReadFile(tarball)
	if err != nil {
		t.Fatal(err)
	}
	out, err := addHub(t, tarball)
	if err == nil || !strings.Contains(out, "no Makefile") {
		t.Fatalf("add-hub.sh on a tarball without a Makefile: %v\n%s\nwant a failure naming the Makefile", err, out)
	}
	after, err := os.ReadFile(tarball)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the tarball changed although add-hub.sh failed (%v)", err)
	}
}
