package core

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
)

// OwnerOptions returns the ownership options every owner of profile p uses: its state directory,
// role, version, takeover policy, and the journal as an extra epoch source, so an epoch never
// goes back even if owner.json and the epoch file are lost.
func OwnerOptions(p paths.Paths, role ownership.Role, version string, policy ownership.Policy, logger *slog.Logger) ownership.Options {
	return ownership.Options{
		Dir: p.State, Role: role, Version: version, Policy: policy, Logger: logger,
		EpochFloor: func() (uint64, error) { return JournalEpoch(p) },
	}
}

// JournalEpoch returns the highest epoch recorded in p's journal: 0 when there is no journal
// yet, an error when it exists but cannot be read (the owner must then not guess an epoch).
func JournalEpoch(p paths.Paths) (uint64, error) {
	if _, err := os.Stat(p.Journal); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	j, err := scheduler.OpenJournal(p.Journal)
	if err != nil {
		return 0, fmt.Errorf("open journal for epoch: %w", err)
	}
	defer j.Close()
	e, err := j.MaxEpoch()
	if err != nil {
		return 0, fmt.Errorf("journal epoch: %w", err)
	}
	return e, nil
}
