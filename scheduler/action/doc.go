// Package action performs what a routine does — run a command, run a shell script, watch a page,
// show a notification, ping a monitor — and reports an outcome, with no UI import.
//
// The scheduler decodes an action table into a *Spec (spec.go), reports Validate's FieldErrors
// at routines.toml:LINE:COL, builds the action with New (new.go), wraps it with WithRetries
// (retry.go), runs it, and passes each Result through Alerts (alerts.go) to decide what to
// notify. Outcome strings (outcome.go) equal the scheduler's.
//
// Files: exec.go with exec_unix.go / exec_windows.go (run and shell: output capture, process
// group or Job Object, SIGTERM then SIGKILL), watch.go with watch_text.go (page text) and
// watch_diff.go (unified diff and change summary), ping.go, notify.go, httpreq.go (the request
// both HTTP actions send), output.go (the 64 KiB output cap), validate.go, errors.go.
package action
