// Package scheduler runs routines at most once per slot. It decides when a routine's slot runs,
// is skipped or is recorded missed: it arms one gocron job per routine, admits runs only while
// the ownership gate does, claims every slot in the SQLite run journal before the action starts,
// and repairs what time did meanwhile (catch-up after downtime, wake from suspend, clock jumps,
// time-zone changes) without ever firing a claimed slot twice (docs/design.md#4-run-journal,
// #5-scheduling-rules). What routines.toml means is package config's to decide, what happened
// to each slot package journal's, and what a run does package action's.
//
// Files, one job each:
//
//	api.go, types.go  contract types: Gate, RoutineState, Notifier
//	errors.go        sentinel errors
//	engine.go        Engine: NewEngine, Start, Stop, and the gocron gate (gateElector)
//	watchconfig.go   Reload: re-reading routines.toml when it changes
//	arm.go           arming a routine's gocron job; re-arming after a clock jump
//	schedule.go      cronAdapter (config.Schedule as gocron's cron) and Preview
//	fire.go          a timer's fire: which slot is due, claimLead, late timers
//	dispatch.go      the overlap policy, refused slots, slots that never started
//	run.go           one run: claim, wait for the slot, the action, finish
//	finish_retry.go  retrying a run's end that the journal refused for a while
//	afterrun.go      alerts and auto-pause after a run
//	catchup.go       the catch-up passes (start, wake, zone change, late timer)
//	wake.go          detecting suspend and clock steps
//	zonewatch.go     following the system time zone
//	requests.go      the owner's pollers: run-now requests and pauses
//	unclaimed.go     slots the journal could not record, kept until it can
//	orphans*.go      ending the processes of runs a dead owner left
//	states.go        States: what observers show, from the journal alone
package scheduler
