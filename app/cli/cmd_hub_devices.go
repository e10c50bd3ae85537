package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/internal/atomicfile"
	"github.com/routinely/routinely/scheduler/config"
)

// devicesDir is the directory of the hub's store where add-device writes credentials files
// (hubserver.DevicesDir, which the hub reads; this package does not link the server).
const devicesDir = "devices"

// newHubAddDeviceCmd builds `routinely hub add-device NAME`: it makes the device's credentials,
// signed with the hub's key (hub.LoadHubKey, made at first use in the store), writes them to
// <store>/devices/NAME.creds (0600) and says what to do with them.
func newHubAddDeviceCmd(e *env) *cobra.Command {
	var o hubOptions
	cmd := &cobra.Command{
		Use:   "add-device NAME [--store DIR]",
		Short: "Make a device's credentials, with which it signs its claims on the hub",
		Long: `Make credentials for the device called NAME: a key of its own, signed with the hub's key
(made at first use, 0600, in <store>/hub.nk), written to <store>/devices/NAME.creds (0600).
Copy that file beside the device's routines.toml (0600) and name it in [hub]:
credentials_file = "NAME.creds" (token_file is then not needed). The device then connects with
its key, which the hub lets write only its own liveness key and the claim, run and anchor keys;
it signs every claim and run it puts on the hub, takes NAME as its device name, and ignores (and
reports) any claim that no device of this hub signed: someone who has only the hub's token can
no longer make a slot be skipped. Every device of the hub needs its own credentials: a device
with credentials ignores the claims of one without. The hub reads the credentials at each
connection: no restart. Run it where the hub's store is, as the hub's user.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return runHubAddDevice(e, o, args[0]) },
	}
	cmd.Flags().StringVar(&o.store, "store", "", "the hub's store directory (default: <state dir>/hub)")
	return cmd
}

// newHubRemoveDeviceCmd builds `routinely hub remove-device NAME`: it deletes the device's
// credentials from the store, so the hub refuses its key from its next connection on.
func newHubRemoveDeviceCmd(e *env) *cobra.Command {
	var o hubOptions
	cmd := &cobra.Command{
		Use:   "remove-device NAME [--store DIR]",
		Short: "Remove a device's credentials: the hub refuses its key from its next connection",
		Long: `Remove the credentials of the device called NAME (<store>/devices/NAME.creds): the hub refuses
its key from its next connection on, without a restart. A connection it has now lasts until it
drops: restart the hub to cut it at once. Its claims already on the hub stay valid (the other
devices trust what the hub's key signed). Run it where the hub's store is, as the hub's user.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return runHubRemoveDevice(e, o, args[0]) },
	}
	cmd.Flags().StringVar(&o.store, "store", "", "the hub's store directory (default: <state dir>/hub)")
	return cmd
}

// runHubRemoveDevice is remove-device's work. Errors: a name that is not a device name, or
// that has no credentials (2); the file system's.
func runHubRemoveDevice(e *env, o hubOptions, name string) error {
	if !config.ValidDeviceName(name) {
		return fmt.Errorf("%w: device name %q must be 1 to 64 of A-Z a-z 0-9 _ -", errUsage, name)
	}
	store, err := hubStore(e, o)
	if err != nil {
		return err
	}
	file := filepath.Join(store, devicesDir, name+".creds")
	if err := os.Remove(file); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: no device %s on this hub (%s does not exist)", errUsage, name, file)
	} else if err != nil {
		return fmt.Errorf("remove device %s: %w", name, err)
	}
	fmt.Fprintf(e.stdout, "Device %s removed: the hub refuses its key from its next connection (restart the hub to cut its connection now).\n", name)
	return nil
}

// runHubAddDevice is add-device's work. Errors: a name that is not a device name, or whose
// credentials exist already (2); a store open to others (77); the key's or file system's.
func runHubAddDevice(e *env, o hubOptions, name string) error {
	if !config.ValidDeviceName(name) {
		return fmt.Errorf("%w: device name %q must be 1 to 64 of A-Z a-z 0-9 _ -", errUsage, name)
	}
	store, err := hubStore(e, o)
	if err != nil {
		return err
	}
	dir := filepath.Join(store, devicesDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hub store: %w", err)
	}
	for _, d := range []string{store, dir} {
		fi, err := os.Lstat(d)
		if err != nil {
			return fmt.Errorf("hub store: %w", err)
		}
		if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
			return withCode(ExitPermission, fmt.Errorf("hub store %s is not a private directory (mode %04o): chmod 700 %s", d, fi.Mode().Perm(), d))
		}
	}
	file := filepath.Join(dir, name+".creds")
	if _, err := os.Lstat(file); err == nil {
		return fmt.Errorf("%w: %s exists already: device %s has credentials (copy that file to it), or remove the file to make new ones", errUsage, file, name)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	key, err := hub.LoadHubKey(store)
	if err != nil {
		return err
	}
	data, err := hub.MakeCreds(key, name)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(file, data, 0o600); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	fmt.Fprintf(e.stdout, "Credentials of device %s written to %s.\nCopy it beside that device's routines.toml (0600; it is a secret), and in its [hub]:\n  credentials_file = %q   # instead of token_file\nthen restart its owner. Every device of this hub needs its own.\n", name, file, name+".creds")
	return nil
}
