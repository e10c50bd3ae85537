// Package action performs what a routine does — run a command, run a shell script, watch a page,
// show a notification, ping a monitor — and reports an outcome, with no UI import.
package action
