// Package scheduler runs routines at most once per slot: routines.toml parsing and validation,
// slot computation, the SQLite run journal, the gocron engine gated by ownership, catch-up and
// wake repair (docs/design.md#4-run-journal, #5-scheduling-rules).
package scheduler
