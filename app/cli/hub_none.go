//go:build nohub

package cli

import (
	"context"
	"errors"
)

// runHub in a build without the embedded hub (-tags nohub: a smaller binary for devices)
// explains where to get one. Errors: always (1).
func runHub(context.Context, *env, hubOptions) error {
	return errors.New("this build has no embedded hub (built with -tags nohub): run 'routinely hub' from a full build, or a stock nats-server 2.11+ with JetStream (see the README)")
}
