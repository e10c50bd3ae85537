package config

import (
	"fmt"

	"github.com/routinely/routinely/internal/atomicfile"
)

// maxCredsBytes bounds reading credentials_file.
const maxCredsBytes = 16 << 10

// ReadCredentials returns the content of CredentialsFile (nil, nil without one), read as a
// secret, as ReadToken reads token_file: a regular file (not a symbolic link or a FIFO, at most
// 16 KiB: atomicfile.Read) inside routines.toml's directory once symbolic links are resolved,
// owned by you (or root) and that others can neither read nor write. Its content is parsed by
// hub.ParseCreds. Errors: ErrHubCreds wrapped with what is wrong and what to do.
func (h *Hub) ReadCredentials() ([]byte, error) {
	if h.CredentialsFile == "" {
		return nil, nil
	}
	if err := h.secretInPlace(h.CredentialsFile, "credentials_file", "the credentials file `routinely hub add-device` wrote"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHubCreds, err)
	}
	data, fi, err := atomicfile.Read(h.CredentialsFile, maxCredsBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: credentials_file %s: %w (copy there the file `routinely hub add-device` wrote for this device)", ErrHubCreds, h.CredentialsFile, err)
	}
	if why := tokenUnsafe(fi); why != "" {
		return nil, fmt.Errorf("%w: credentials_file %s %s", ErrHubCreds, h.CredentialsFile, why)
	}
	return data, nil
}
