package cli

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/spf13/cobra"
)

type hubOptions struct {
	listen          string
	store           string
	tlsCert, tlsKey string
}

// defaultHubListen is where `routinely hub` listens unless told otherwise: this machine only.
const defaultHubListen = "127.0.0.1:4222"

// newHubCmd builds `routinely hub`: flags and help; the work is runHub's (hub_exec.go), which
// hands over to the routinely-hub program.
func newHubCmd(e *env) *cobra.Command {
	o := hubOptions{listen: defaultHubListen}
	cmd := &cobra.Command{
		Use:   "hub [--listen 127.0.0.1:4222] [--store DIR] [--tls-cert FILE --tls-key FILE]",
		Short: "Run the hub through which several devices share one schedule (an embedded NATS JetStream server)",
		Long: `Run the hub: an embedded NATS server with JetStream through which the owners of a person's
devices decide, slot by slot, which device runs each shared routine. It listens on 127.0.0.1
unless --listen says otherwise, and requires a token: made at first start, kept (0600) in
<store>/hub.token, and printed with the URL. Copy the token file to each device, beside its
routines.toml (a token_file elsewhere is refused), and point [hub] in that routines.toml at the
URL (see the README). The store defaults to the hub/
directory of the state directory. Every write is on disk before it is acknowledged.

Give each device credentials of its own with 'routinely hub add-device NAME': its claims are
then signed, and a claim no device of this hub signed is ignored and reported.

To let other machines in, listen on their network (--listen 0.0.0.0:4222) with TLS:
--tls-cert and --tls-key name the PEM certificate and its key; the devices then dial the
tls:// URL printed and verify the certificate with [hub] ca_file. Without TLS it warns: the
token would cross the network in clear text.

A stock nats-server 2.11 or newer with JetStream (and sync_interval: always) works as a hub too.
Stops on SIGINT or SIGTERM.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runHub(cmd.Context(), e, o) },
	}
	cmd.AddCommand(newHubAddDeviceCmd(e), newHubRemoveDeviceCmd(e))
	cmd.Flags().StringVar(&o.listen, "listen", o.listen, "host:port to listen on (0.0.0.0:4222 for other machines; then use TLS or a private network)")
	cmd.Flags().StringVar(&o.store, "store", "", "directory for the token and JetStream's files (default: <state dir>/hub)")
	cmd.Flags().StringVar(&o.tlsCert, "tls-cert", "", "PEM file of the hub's TLS certificate; devices then use tls:// and ca_file")
	cmd.Flags().StringVar(&o.tlsKey, "tls-key", "", "PEM file of that certificate's private key (0600)")
	return cmd
}

// hubTLSArgs returns routinely-hub's TLS flags for o: none, or both files made absolute.
// Errors: only one of --tls-cert and --tls-key (2); filepath.Abs's.
func hubTLSArgs(o hubOptions) ([]string, error) {
	switch {
	case o.tlsCert == "" && o.tlsKey == "":
		return nil, nil
	case o.tlsCert == "" || o.tlsKey == "":
		return nil, fmt.Errorf("%w: give both --tls-cert and --tls-key, or neither", errUsage)
	}
	cert, err := filepath.Abs(o.tlsCert)
	if err != nil {
		return nil, err
	}
	key, err := filepath.Abs(o.tlsKey)
	if err != nil {
		return nil, err
	}
	return []string{"--tls-cert", cert, "--tls-key", key}, nil
}

// checkListen refuses a --listen that is not HOST:PORT (2).
func checkListen(listen string) error {
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return fmt.Errorf("%w: --listen %q: want HOST:PORT, e.g. %s", errUsage, listen, defaultHubListen)
	}
	return nil
}

// hubStore returns the store directory: o.store, or hub/ in the profile's state directory
// (created). Errors: those of resolving the profile (77).
func hubStore(e *env, o hubOptions) (string, error) {
	if o.store != "" {
		return filepath.Abs(o.store)
	}
	p, err := e.resolve()
	if err != nil {
		return "", err
	}
	return filepath.Join(p.State, "hub"), nil
}
