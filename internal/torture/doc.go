// Package torture is the chaos harness: it runs several real routinely daemons on one home and
// attacks them at random, from one seed — SIGKILL, SIGSTOP/SIGCONT, SIGTERM and SIGHUP to the
// owner, takeovers (some withdrawn soon after by killing the challenger), corrupted owner
// records, named pipes in place of state files and a held journal write lock — then checks from what they recorded that no slot
// fired twice, at most one process owned at a time, epochs only grew, every slot is in history,
// and no two runs of a routine overlapped in time (from the runs' own start/end stamps).
package torture
