package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/routinely/routinely/internal/atomicfile"
)

// IDFile is the file in the state directory that holds this device's id on the hub: a random
// UUID made the first time an owner with a [hub] starts, kept for good. The device's liveness
// key is device.<id> and its claims and runs name it, so two devices that share a name (two
// machines called debian) never take each other for the other (docs/design.md#91-the-bucket).
const IDFile = "device-id"

// maxIDBytes bounds reading IDFile: a UUID and a newline, with room to spare.
const maxIDBytes = 4096

// LoadID returns the device id kept in stateDir's IDFile, creating it (a random UUID, 0600,
// written atomically: temp file, fsync, rename) when there is none. The file is read without
// following a symbolic link, blocking on a named pipe or reading more than maxIDBytes
// (atomicfile.Read). Errors: ErrDeviceID (wrapped, naming the file and what to do) when the file
// is there but is not a regular file, is too large or does not hold a UUID in its canonical
// form: it is never silently replaced, since a new id makes this device a new device on the
// hub; the file system's errors reading or writing it, wrapped.
func LoadID(stateDir string) (string, error) {
	path := filepath.Join(stateDir, IDFile)
	data, _, err := atomicfile.Read(path, maxIDBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		id := uuid.NewString()
		if err := atomicfile.Write(path, []byte(id+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("device id: %w", err)
		}
		return id, nil
	case errors.Is(err, atomicfile.ErrNotRegular), errors.Is(err, atomicfile.ErrTooLarge):
		return "", fmt.Errorf("%w: %w; remove it to make a new id (this device then joins the hub as a new device)", ErrDeviceID, err)
	case err != nil:
		return "", fmt.Errorf("device id: %w", err)
	}
	text := strings.TrimSuffix(string(data), "\n")
	if u, err := uuid.Parse(text); err != nil || u.String() != text {
		return "", fmt.Errorf("%w: %s does not hold a device id (a UUID such as %s); remove it to make a new one (this device then joins the hub as a new device)",
			ErrDeviceID, path, "1b4e28ba-2fa1-11d2-883f-0016d3cca427")
	}
	return text, nil
}
