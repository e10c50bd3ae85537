// Package ownership decides which single process owns the Routinely schedule: an OS file lock
// (the guard) held for the owner's lifetime, a diagnostic owner record, a fencing epoch, the
// cooperative takeover handshake, and the observer-side wedge diagnosis (DESIGN.md §2–3).
package ownership
