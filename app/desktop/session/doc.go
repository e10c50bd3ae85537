// Package session is the desktop app's lifecycle without any UI: own the routines when free,
// stand by and observe while another process owns, answer takeover requests, and publish a
// ui.State snapshot whenever something a person would see changes.
package session
