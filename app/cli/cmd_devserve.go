package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
)

type devServeOptions struct {
	dir  string
	addr string
}

// newDevServeCmd builds `routinely dev-serve`: flags and help; the work is runDevServe's.
func newDevServeCmd(e *env) *cobra.Command {
	o := devServeOptions{addr: "127.0.0.1:8765"}
	cmd := &cobra.Command{
		Use:   "dev-serve DIR",
		Short: "Serve DIR over HTTP on localhost, to try page watches offline",
		Long: `Serve the files of DIR at http://127.0.0.1:8765/ until Ctrl-C. The example routines
watch a page served this way ('make run' and 'make daemon' start it), so you can edit the page
and see a change notification without a network. Only for trying things out: it listens on
loopback by default and serves plain files.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir = args[0]
			return runDevServe(cmd.Context(), e, o)
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", o.addr, "address to listen on")
	return cmd
}

// runDevServe serves o.dir until ctx ends. Errors: DIR missing (1), address in use (1).
func runDevServe(ctx context.Context, e *env, o devServeOptions) error {
	if fi, err := os.Stat(o.dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("dev-serve: %s is not a directory", o.dir)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("dev-serve: %w", err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(o.dir)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stderr, "Serving %s at http://%s/ (Ctrl-C to stop)\n", o.dir, ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("dev-serve: %w", err)
	}
	return nil
}
