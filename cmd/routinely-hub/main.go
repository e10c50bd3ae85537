// Command routinely-hub runs the embedded NATS JetStream server behind `routinely hub`. It is a
// program of its own, started by `routinely hub` (app/cli/hub_exec.go), because every process
// that links nats-server pays for it: its package init (server/pse) samples /proc/self/stat once
// a second for the life of the process, and its code makes every routinely command start about
// 8 ms slower. The daemon, the desktop app and the quick looks (status, routines, history) link
// only the client (nats.go). See docs/design.md#97-the-hub-process.
//
// Usage: routinely-hub --listen HOST:PORT --store DIR. Both are given by `routinely hub`, which
// resolves the profile; run it by hand only with both. Exit codes: 0 after SIGINT or SIGTERM,
// 2 for bad flags, 77 for a store open to other users, 1 for any other failure (port in use).
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
	var listen, store string
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
			slog.SetDefault(slog.New(slog.NewTextHandler(stderr, nil)))
			s, err := hubserver.Start(ctx, hubserver.Options{Listen: listen, Store: store, Logger: slog.Default()})
			switch {
			case errors.Is(err, hubserver.ErrUnsafeStore):
				code = exitPermission
				return err
			case err != nil:
				return err
			}
			printStarted(stdout, s.URL, s.TokenFile, s.Token)
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
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { code = exitUsage; return err })
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "routinely hub:", err)
		return code
	}
	return 0
}

// printStarted says where the hub listens and with which token.
func printStarted(w io.Writer, url, tokenFile, token string) {
	fmt.Fprintf(w, "Hub listening on %s\nToken (in %s): %s\n", url, tokenFile, token)
	fmt.Fprintf(w, "On each device, in routines.toml:\n  [hub]\n  url = %q\n  token_file = \"hub.token\"   # a copy of hub.token, beside routines.toml\n  device = \"laptop\"\nCtrl-C stops.\n", url)
}
