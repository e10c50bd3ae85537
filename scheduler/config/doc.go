// Package config decides what routines.toml means: which routines are valid, what each one
// runs and when its slots are, and what is wrong with the rest, at FILE:LINE:COL
// (docs/design.md#51-configuration, #52-slots, #53-daylight-saving-time). It never runs
// anything and never touches the journal; the scheduler arms what it returns.
//
// A file that cannot be used as a whole (unreadable, not a regular file, over MaxConfigBytes,
// nested past MaxNesting, keys past MaxKeyDepth, a table past MaxTableKeys, not TOML) is one
// *ConfigError wrapping ErrConfig. Otherwise validation never stops at the first finding:
// invalid routines are left out and each problem is a Problem, and the valid ones are returned. A file another user could
// change grants nothing beyond what any other user could do: its run, shell, watch and ping
// routines and its [hub] are refused.
//
// Files, one job each:
//
//	config.go        LoadConfig and Parse, Config, ConfigError
//	errors.go        sentinel errors
//	perm_*.go        opening the file once and vetting who could have changed it
//	tomllimits.go    the nesting, key depth and width limits checked before decoding
//	tomlpos.go       the line and column of every key path
//	validate.go      the checks of [defaults] and each [[routine]] and its schedule
//	validate_action.go  the checks of each action (run, shell, watch, notify, ping)
//	routine.go       Routine, its defaults and bounds, Problem
//	slots.go         Schedule: slot computation for cron, at and every, in civil time (DST)
//	zone.go          the system time zone that routines without a timezone follow
package config
