//go:build windows

package config

import "os"

// openConfig opens routines.toml for reading and returns it with a nil distrust. Windows has no
// owner and mode bits to vet: the default location (under %LOCALAPPDATA%) inherits the user
// profile's ACL, which admits only that user, SYSTEM and Administrators; ACLs of a --home
// chosen elsewhere are not checked. Errors: as os.Open, errIsDir, errNotRegular.
func openConfig(path string) (*os.File, *distrust, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regular(path, fi)
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, nil, nil
}
