package ownership

import "os"

// logOwnership writes the machine-readable ownership event that the chaos test and the
// benchmarks (internal/torture, internal/bench) read from the daemon's log:
// "ownership acquired|released epoch=N pid=P mono_ns=M". acquired is logged once the guard is
// locked and before any run is admitted; released just before the guard is unlocked, so the
// logged interval always lies inside the real one and two of them never overlap unless two
// processes really owned at once. mono_ns is CLOCK_MONOTONIC, comparable across processes.
func (h *Handle) logOwnership(what string) {
	h.log.Info("ownership "+what, "epoch", h.epoch, "pid", os.Getpid(), "mono_ns", monoNow())
}
