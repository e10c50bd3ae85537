package ownership

import "os"

// logOwnership writes the machine-readable ownership event that the chaos test and the
// benchmarks (internal/torture, internal/bench) read from the daemon's log:
// "ownership acquired|released epoch=N pid=P mono_ns=M". acquired is logged once the guard is
// locked and before any run is admitted; released just before the guard is unlocked, so the
// logged interval always lies inside the real one and two of them never overlap unless two
// processes really owned at once. mono_ns is CLOCK_MONOTONIC, comparable across processes.
// acquired also carries locked_mono_ns, when the guard was locked (before the epoch was stored
// and the record written): the part of crash recovery that the kernel decides.
func (h *Handle) logOwnership(what string) {
	args := []any{"epoch", h.epoch, "pid", os.Getpid(), "mono_ns", monoNow()}
	if what == "acquired" {
		args = append(args, "locked_mono_ns", h.guard.lockedMono)
	}
	h.log.Info("ownership "+what, args...)
}
