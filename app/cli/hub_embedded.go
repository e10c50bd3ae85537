//go:build !nohub

package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/routinely/routinely/hub/hubserver"
)

// runHub runs the embedded hub until ctx ends (SIGINT, SIGTERM). Errors: a bad --listen (2);
// a store open to others (77); the server's (port in use: 1).
func runHub(ctx context.Context, e *env, o hubOptions) error {
	if err := checkListen(o.listen); err != nil {
		return err
	}
	store, err := hubStore(e, o)
	if err != nil {
		return err
	}
	s, err := hubserver.Start(ctx, hubserver.Options{Listen: o.listen, Store: store, Logger: slog.Default()})
	switch {
	case errors.Is(err, hubserver.ErrUnsafeStore):
		return withCode(ExitPermission, err)
	case err != nil:
		return err
	}
	printHubStarted(e, s.URL, s.TokenFile, s.Token)
	<-ctx.Done()
	slog.Info("hub stopping")
	s.Shutdown()
	fmt.Fprintln(e.stderr, "Hub stopped.")
	return nil
}
