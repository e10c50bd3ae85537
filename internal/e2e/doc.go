// Package e2e holds black-box tests that build the routinely binary (-tags nogui) and drive it as
// a user would: real processes, real signals, a temporary --home per test.
package e2e
