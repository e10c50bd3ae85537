package owning

import (
	"fmt"
	"log/slog"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// Options returns the ownership options every owner of profile p uses: its state directory,
// role, version, takeover policy, and the journal as an extra epoch source, so an epoch never
// goes back even if owner.json and the epoch file are lost.
func Options(p paths.Paths, role ownership.Role, version string, policy ownership.Policy, logger *slog.Logger) ownership.Options {
	return ownership.Options{
		Dir: p.State, Role: role, Version: version, Policy: policy, Logger: logger,
		EpochFloor: func() (uint64, error) { return JournalEpoch(p) },
	}
}

// JournalEpoch returns the highest epoch recorded in p's journal: 0 when there is no journal
// yet, an error when it exists but cannot be read (the owner must then not guess an epoch). It
// only reads, so another process holding the journal's write lock does not stop a standby from
// owning; one that keeps readers out too makes the error wrap ownership.ErrEpochFloorUnavailable,
// and ownership.Wait tries again.
func JournalEpoch(p paths.Paths) (uint64, error) {
	e, err := journal.MaxEpochOf(p.Journal)
	switch {
	case journal.IsUnavailable(err):
		return 0, fmt.Errorf("%w: %w", ownership.ErrEpochFloorUnavailable, err)
	case err != nil:
		return 0, fmt.Errorf("journal epoch: %w", err)
	}
	return e, nil
}
