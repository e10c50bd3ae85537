package packaging

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fyneTarball writes a tarball laid out as `fyne package -os linux` (fyne.io/tools v1.7.4) lays
// out its Routinely.tar.xz: under top ("routinely", or "" as fyne-cross does), the Makefile
// (makefile; testdata/fyne-tarball.Makefile is the one fyne generated for this app, "" for
// none) and usr/{local/,}{bin,share/...} (local false: fyne on a machine without /usr/local).
// It returns the tarball's path.
func fyneTarball(t *testing.T, top string, local bool, makefile string) string {
	t.Helper()
	root := t.TempDir()
	prefix := "usr/"
	if local {
		prefix = "usr/local/"
	}
	files := map[string]string{
		prefix + "bin/routinely":                               "#!/bin/sh\necho routinely\n",
		prefix + "share/applications/io.routinely.app.desktop": "[Desktop Entry]\nType=Application\nName=Routinely\nExec=routinely\nIcon=io.routinely.app\n",
		prefix + "share/pixmaps/io.routinely.app.png":          "png",
	}
	if makefile != "" {
		files["Makefile"] = makefile
	}
	for name, data := range files {
		p := filepath.Join(root, top, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tarball := filepath.Join(t.TempDir(), "Routinely.fyne.tar.xz")
	members := top
	if top == "" {
		members = "."
	}
	if out, err := exec.Command("tar", "-cJf", tarball, "-C", root, members).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	return tarball
}

// fyneMakefile is the Makefile fyne generated for this app, for a usr/local layout or not.
func fyneMakefile(t *testing.T, local bool) string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join("testdata", "fyne-tarball.Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !local {
		return strings.ReplaceAll(string(mk), "usr/local/", "usr/")
	}
	return string(mk)
}

// addHub runs packaging/linux/add-hub.sh on in with a stand-in hub program, writing out. It
// runs in out's directory and names out relative to it, as `make package` names build/….
func addHub(t *testing.T, in, out string) (string, error) {
	t.Helper()
	hub := filepath.Join(t.TempDir(), "routinely-hub")
	if err := os.WriteFile(hub, []byte("#!/bin/sh\necho hub\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("linux", "add-hub.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, in, hub, filepath.Base(out))
	cmd.Dir = filepath.Dir(out)
	msg, err := cmd.CombinedOutput()
	return string(msg), err
}

// `make package` puts routinely-hub beside routinely in fyne's tarball, and the tarball's own
// Makefile installs it with routinely (add-hub.sh checks that itself; here the tarball is
// unpacked and installed again, as a person would), in each layout fyne makes.
func TestPackageTarballCarriesTheHubProgram(t *testing.T) {
	for _, tc := range []struct {
		name, top string
		local     bool
	}{
		{"fyne, /usr/local", "routinely", true},
		{"fyne, no /usr/local", "routinely", false},
		{"fyne-cross", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "Routinely.tar.xz")
			if msg, err := addHub(t, fyneTarball(t, tc.top, tc.local, fyneMakefile(t, tc.local)), out); err != nil {
				t.Fatalf("add-hub.sh: %v\n%s", err, msg)
			}
			dir := t.TempDir()
			if msg, err := exec.Command("tar", "-xJf", out, "-C", dir).CombinedOutput(); err != nil {
				t.Fatalf("tar -x: %v\n%s", err, msg)
			}
			dest := t.TempDir()
			install := exec.Command("make", "-C", filepath.Join(dir, tc.top), "install", "DESTDIR="+dest, "PREFIX=/usr/local")
			if msg, err := install.CombinedOutput(); err != nil {
				t.Fatalf("make install: %v\n%s", err, msg)
			}
			for _, p := range []string{"routinely", "routinely-hub"} {
				fi, err := os.Stat(filepath.Join(dest, "usr/local/bin", p))
				if err != nil || fi.Mode().Perm()&0o111 == 0 {
					t.Errorf("after make install, bin/%s: %v, want an executable", p, err)
				}
			}
			hub, err := exec.Command(filepath.Join(dest, "usr/local/bin/routinely-hub")).Output()
			if err != nil || !bytes.Equal(hub, []byte("hub\n")) {
				t.Errorf("the installed routinely-hub ran: %q, %v; want the hub program given to add-hub.sh", hub, err)
			}
		})
	}
}

// A tarball not laid out as add-hub.sh expects (fyne changed its layout or its Makefile) fails
// the step with a message saying what is wrong, and leaves no output tarball (one from an earlier
// run included) and fyne's own as it was.
func TestAddHubRefusesAnUnexpectedTarball(t *testing.T) {
	for _, tc := range []struct {
		name, makefile, want string
	}{
		{"no Makefile", "", "no Makefile"},
		{"a Makefile that installs no $(Exec)", "install:\n\tinstall -Dm00755 usr/local/bin/routinely $(DESTDIR)$(PREFIX)/bin/routinely\n", "no install/uninstall lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fyneTarball(t, "routinely", true, tc.makefile)
			before, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "Routinely.tar.xz")
			if err := os.WriteFile(out, []byte("an earlier run's"), 0o644); err != nil {
				t.Fatal(err)
			}
			msg, err := addHub(t, in, out)
			if err == nil || !strings.Contains(msg, tc.want) {
				t.Fatalf("add-hub.sh: %v\n%s\nwant a failure saying %q", err, msg, tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("an output tarball is there after the failure (%v)", err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
				t.Errorf("add-hub.sh left %v beside the output", entries)
			}
			if after, err := os.ReadFile(in); err != nil || !bytes.Equal(before, after) {
				t.Errorf("fyne's tarball changed (%v)", err)
			}
		})
	}
}
