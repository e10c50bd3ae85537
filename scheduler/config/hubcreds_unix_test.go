//go:build !windows

package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadCredentials takes credentials_file only from inside routines.toml's directory, as a
// regular file of yours that nobody else can read or write; each refusal says what to do.
func TestReadCredentialsVetsTheFile(t *testing.T) {
	config, elsewhere := t.TempDir(), t.TempDir()
	const creds = `{"hub":"A…"}` + "\n"
	good := writeFile(t, filepath.Join(config, "laptop.creds"), creds)
	if err := os.Chmod(good, 0o600); err != nil {
		t.Fatal(err)
	}
	outside := writeFile(t, filepath.Join(elsewhere, "laptop.creds"), creds)
	readable := writeFile(t, filepath.Join(config, "readable.creds"), creds)
	if err := os.Chmod(readable, 0o644); err != nil {
		t.Fatal(err)
	}
	link := symlink(t, outside, filepath.Join(config, "link.creds"))
	for _, c := range []struct {
		file, want string
	}{
		{good, ""},
		{outside, "outside"},
		{link, "symbolic link"},
		{readable, "chmod 600"},
		{filepath.Join(config, "missing.creds"), "add-device"},
	} {
		h := &Hub{CredentialsFile: c.file, dir: config}
		data, err := h.ReadCredentials()
		switch {
		case c.want == "" && (err != nil || string(data) != creds):
			t.Errorf("ReadCredentials(%s) = %q, %v; want the file", c.file, data, err)
		case c.want != "" && (!errors.Is(err, ErrHubCreds) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("ReadCredentials(%s) = %v; want ErrHubCreds saying %q", c.file, err, c.want)
		}
	}
	if data, err := (&Hub{dir: config}).ReadCredentials(); data != nil || err != nil {
		t.Errorf("ReadCredentials without credentials_file = %q, %v; want nil, nil", data, err)
	}
}
