// Command routinely-hub runs the embedded NATS JetStream server behind `routinely hub`. It is a
// program of its own, started by `routinely hub` (app/cli/hub_exec.go), because every process
// that links nats-server pays for it: its package init (server/pse) samples /proc/self/stat once
// a second for the life of the process, and its code makes every routinely command start about
// 8 ms slower. The daemon, the desktop app and the quick looks (status, routines, history) link
// only the client (nats.go). See docs/design.md#97-the-hub-process.
//
// Usage: routinely-hub --listen HOST:PORT --store DIR [--tls-cert FILE --tls-key FILE]. Listen
// and store are given by `routinely hub`, which resolves the profile; run it by hand only with
// both. Exit codes: 0 after SIGINT or SIGTERM, 2 for bad flags, 77 for a store or TLS key open
// to other users, 1 for any other failure (port in use, a certificate that does not load).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/hub/hubserver"
)

// Exit codes, the same as routinely's (app/cli/exitcodes.go) for the same causes.
const (
	exitError      = 1
	exitUsage      = 2
	exitPermission = 77
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, runs the hub until ctx ends and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var listen, store, tlsCert, tlsKey string
	code := exitError
	cmd := &cobra.Command{
		Use:           "routinely-hub --listen HOST:PORT --store DIR",
		Short:         "The hub server behind `routinely hub` (run that instead)",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error {
			if listen == "" || store == "" {
				code = exitUsage
				return errors.New("--listen and --store are both required (`routinely hub` gives them)")
			}
			if (tlsCert == "") != (tlsKey == "") {
				code = exitUsage
				return errors.New("give both --tls-cert and --tls-key, or neither")
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(stderr, nil)))
			s, err := hubserver.Start(ctx, hubserver.Options{Listen: listen, Store: store,
				TLSCert: tlsCert, TLSKey: tlsKey, Logger: slog.Default()})
			switch {
			case errors.Is(err, hubserver.ErrUnsafeStore):
				code = exitPermission
				return err
			case err != nil:
				return err
			}
			warnExposed(stderr, s)
			printStarted(stdout, s)
			<-ctx.Done()
			slog.Info("hub stopping")
			s.Shutdown()
			fmt.Fprintln(stderr, "Hub stopped.")
			return nil
		},
	}
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.Flags().StringVar(&listen, "listen", "", "host:port to listen on")
	cmd.Flags().StringVar(&store, "store", "", "directory for the token and JetStream's files")
	cmd.Flags().StringVar(&tlsCert, "tls-cert", "", "PEM file of the hub's TLS certificate (with --tls-key)")
	cmd.Flags().StringVar(&tlsKey, "tls-key", "", "PEM file of the TLS certificate's private key (0600)")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { code = exitUsage; return err })
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "routinely hub:", err)
		return code
	}
	return 0
}

// printStarted says where devices reach the hub (every address of this machine when it
// listens on all of them), with which token, and what to put in routines.toml.
func printStarted(w io.Writer, s *hubserver.Server) {
	if len(s.Reachable) == 1 && s.Reachable[0] == s.URL {
		fmt.Fprintf(w, "Hub listening on %s\n", s.URL)
	} else {
		fmt.Fprintf(w, "Hub listening on %s (every network interface); devices reach it at one of:\n", s.URL)
		for _, u := range s.Reachable {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
	fmt.Fprintf(w, "Token (in %s): %s\n", s.TokenFile, s.Token)
	fmt.Fprintf(w, "On each device, in routines.toml:\n  [hub]\n  url = %q\n  token_file = \"hub.token\"  # a copy of %s, 0600, beside routines.toml\n", s.Reachable[0], s.TokenFile)
	if s.TLS {
		fmt.Fprintf(w, "  ca_file = \"hub.crt\"       # a copy of the certificate (or of its CA), beside routines.toml\n")
	}
	fmt.Fprintf(w, "  credentials_file = \"laptop.creds\"  # `routinely hub add-device laptop` writes it; one per device, beside routines.toml\nCtrl-C stops.\n")
}

// warnExposed warns, on w (stderr), when other machines can connect to the hub: what that
// means, and what to do about it.
func warnExposed(w io.Writer, s *hubserver.Server) {
	switch {
	case s.Loopback:
	case s.TLS:
		fmt.Fprintf(w, "Warning: the hub listens on %s, so other machines can connect to it. TLS keeps its traffic private; the token is what keeps others out: keep hub.token secret (0600 on every device), and let a firewall admit only your own devices to this port if you can.\n", s.URL)
	default:
		fmt.Fprintf(w, "Warning: the hub listens on %s, so other machines can connect to it, and without TLS the token and every claim cross the network in clear text: anyone who can watch that network can read the token and then decide which device runs what, or stop them all. Restart it with --tls-cert and --tls-key (see the README, \"Several devices, one schedule\"), or keep the default --listen 127.0.0.1:4222 and reach it through a VPN or an SSH tunnel.\n", s.URL)
	}
}
