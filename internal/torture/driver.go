//go:build linux

package torture

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Contenders is how many daemons the driver keeps alive.
const Contenders = 6

// Window is a span of CLOCK_MONOTONIC time during which one process was SIGSTOPped.
type Window struct {
	PID        int
	Start, End int64
}

// Driver runs the contenders and attacks them at random, from one seeded source.
type Driver struct {
	Bin, Home, Dir string
	Rng            *rand.Rand
	Out            io.Writer // one line per action, for the record

	mu      sync.Mutex
	locks   sync.WaitGroup // journal locks still held (Calm waits for them)
	procs   []*Proc
	windows []Window
	timers  []*time.Timer
	counts  map[string]int
}

// NewDriver prepares a driver; Start launches the first contenders.
func NewDriver(bin, home, dir string, seed int64, out io.Writer) *Driver {
	return &Driver{Bin: bin, Home: home, Dir: dir, Rng: rand.New(rand.NewSource(seed)), Out: out, counts: map[string]int{}}
}

// logf writes one action line to d.Out, prefixed with the UTC wall time to the millisecond.
func (d *Driver) logf(format string, a ...any) {
	fmt.Fprintf(d.Out, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05.000")}, a...)...)
}

// spawn starts one daemon; takeover ones ask the owner to yield instead of standing by.
func (d *Driver) spawn(takeover bool) {
	policy := "allow"
	if d.Rng.Intn(3) == 0 {
		policy = "deny"
	}
	args := []string{"--home", d.Home, "daemon", "--wait", "--on-takeover", policy}
	if takeover {
		args = []string{"--home", d.Home, "daemon", "--takeover", "--timeout", "10s", "--on-takeover", policy}
	}
	p, err := StartProc(d.Bin, d.Dir, len(d.procs)+1, args)
	if err != nil {
		d.logf("start failed: %v", err)
		return
	}
	d.procs = append(d.procs, p)
	d.logf("start #%d pid %d: %v", p.ID, p.PID(), args[2:])
}

// alive returns the contenders that have not exited, in start order (d.mu held).
func (d *Driver) alive() []*Proc {
	var a []*Proc
	for _, p := range d.procs {
		if p.Alive() {
			a = append(a, p)
		}
	}
	return a
}

// topUp restarts contenders until n are alive.
func (d *Driver) topUp(n int) {
	for missing := n - len(d.alive()); missing > 0; missing-- {
		d.spawn(false)
	}
}

// owner finds the live contender that owns now: the one whose last logged ownership event is
// "acquired". Without such logs it falls back to the pid in owner.json.
func (d *Driver) owner() *Proc {
	for _, p := range d.alive() {
		evs, _ := ParseEvents(p.LogPath)
		if n := len(evs); n > 0 && evs[n-1].Acquired {
			return p
		}
	}
	var rec struct {
		PID int `json:"pid"`
	}
	if b, err := os.ReadFile(filepath.Join(d.Home, "owner.json")); err == nil && json.Unmarshal(b, &rec) == nil {
		for _, p := range d.alive() {
			if p.PID() == rec.PID {
				return p
			}
		}
	}
	return nil
}

// Start launches the initial contenders.
func (d *Driver) Start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.topUp(Contenders)
}

// Step performs one random attack.
func (d *Driver) Step() {
	d.mu.Lock()
	defer d.mu.Unlock()
	actions := []string{"kill", "kill", "kill", "stop", "stop", "term", "term", "hup", "takeover", "takeover",
		"withdraw", "restart", "restart", "delete-record", "truncate-record", "garbage-record", "fifo-record",
		"fifo-request", "lock-journal"}
	a := actions[d.Rng.Intn(len(actions))]
	switch a {
	case "kill", "term", "stop", "hup":
		a = d.attackOwner(a)
	case "takeover":
		d.spawn(true)
	case "withdraw":
		d.withdrawTakeover()
	case "lock-journal":
		d.lockJournal()
	case "restart":
		d.topUp(Contenders)
	default:
		d.corruptRecord(a)
	}
	d.counts[a]++
	// A crash leaves the owner's spot to the standbys; keep at least two of them around.
	if len(d.alive()) < 2 {
		d.topUp(2)
	}
}

// attackOwner signals the current owner and returns what was actually done.
func (d *Driver) attackOwner(a string) string {
	o := d.owner()
	switch {
	case o == nil:
		return "no-owner"
	case a == "kill":
		d.closeWindow(o, MonoNow())
		o.Kill()
	case o.IsStopped():
		return a + "-skipped-stopped" // SIGTERM would wait for SIGCONT; stopping twice is moot
	case (a == "term" || a == "hup") && o.WasTermed():
		return a + "-skipped-draining" // a second stop signal means "exit now", like a second Ctrl-C
	case a == "term":
		o.Term()
	case a == "hup":
		o.Hup()
	case a == "stop":
		d.windows = append(d.windows, Window{PID: o.PID(), Start: MonoNow()})
		o.Stop()
		dur := time.Second + time.Duration(d.Rng.Int63n(int64(7*time.Second)))
		d.timers = append(d.timers, time.AfterFunc(dur, func() { d.resume(o) }))
		d.logf("stop owner #%d pid %d for %.1fs", o.ID, o.PID(), dur.Seconds())
		return a
	}
	d.logf("%s owner #%d pid %d", a, o.ID, o.PID())
	return a
}

// withdrawTakeover asks the owner to hand over and withdraws the request soon after, by killing
// the challenger: the owner, which may have started yielding, must resume and handle every slot
// it had dispatched but not yet claimed (none may be lost in the yield).
func (d *Driver) withdrawTakeover() {
	d.spawn(true)
	p := d.procs[len(d.procs)-1]
	after := 50*time.Millisecond + time.Duration(d.Rng.Int63n(int64(800*time.Millisecond)))
	d.timers = append(d.timers, time.AfterFunc(after, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if p.Alive() {
			d.closeWindow(p, MonoNow())
			p.Kill()
			d.logf("withdraw: kill challenger #%d pid %d after %.0f ms", p.ID, p.PID(), after.Seconds()*1000)
		}
	}))
}

// lockJournal holds the journal's write lock for 1–4 s from this process, as another program
// would: no run may start without its claim, and history must show the slots of that span.
func (d *Driver) lockJournal() {
	hold := time.Second + time.Duration(d.Rng.Int63n(int64(3*time.Second)))
	path := filepath.Join(d.Home, "journal.db")
	if _, err := os.Stat(path); err != nil {
		d.logf("lock journal: %v", err)
		return
	}
	d.locks.Add(1)
	d.logf("lock journal for %.1fs", hold.Seconds())
	go func() {
		defer d.locks.Done()
		if err := LockJournal(path, hold); err != nil {
			d.logf("lock journal: %v", err)
		}
	}()
}

// corruptRecord attacks owner.json, which is diagnostics only: nothing may depend on it, and
// puts named pipes where the owner reads its record and takeover requests.
func (d *Driver) corruptRecord(a string) {
	record := filepath.Join(d.Home, "owner.json")
	switch a {
	case "delete-record":
		d.logf("delete owner.json: %v", os.Remove(record))
	case "truncate-record":
		d.logf("truncate owner.json: %v", os.Truncate(record, int64(d.Rng.Intn(40))))
	case "fifo-record", "fifo-request":
		// A named pipe must not block the owner, a standby or an observer: readers open state
		// files without blocking and refuse anything but a regular file; writers replace it.
		name := map[string]string{"fifo-record": "owner.json", "fifo-request": "takeover.json"}[a]
		path := filepath.Join(d.Home, name)
		_ = os.Remove(path)
		d.logf("%s as a FIFO: %v", name, syscall.Mkfifo(path, 0o600))
	case "garbage-record":
		junk := make([]byte, 1+d.Rng.Intn(300))
		d.Rng.Read(junk)
		if d.Rng.Intn(2) == 0 {
			junk = []byte(`{"token":"forged","epoch":999999,"pid":1,"state":"owning"`)
		}
		d.logf("garbage owner.json: %v", writeNoBlock(record, junk))
	}
}

// writeNoBlock writes data over path (created 0600) without blocking when path is a named pipe
// that a fifo-record step left and nobody reads: os.WriteFile would wait for a reader forever,
// holding up the whole chaos run (the owner's next heartbeat replaces the name, not the pipe the
// open waits on). On a pipe without a reader it fails with ENXIO, which is logged.
func writeNoBlock(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// resume sends SIGCONT to p if it is still stopped and closes its stop window.
func (d *Driver) resume(p *Proc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.IsStopped() && p.Alive() {
		p.Cont()
		d.closeWindow(p, MonoNow())
		d.logf("cont #%d pid %d", p.ID, p.PID())
	}
}

// closeWindow ends p's open SIGSTOP window at the CLOCK_MONOTONIC instant at (ns) (d.mu held).
func (d *Driver) closeWindow(p *Proc, at int64) {
	for i := range d.windows {
		if d.windows[i].PID == p.PID() && d.windows[i].End == 0 {
			d.windows[i].End = at
		}
	}
}

// Calm ends the attacks: it resumes every stopped process and restores the full set of
// contenders, so the last owner can account for the slots of the run before shutdown.
func (d *Driver) Calm() {
	d.mu.Lock()
	timers := d.timers
	d.timers = nil
	d.mu.Unlock()
	for _, t := range timers {
		t.Stop()
	}
	d.locks.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.procs {
		if p.IsStopped() {
			p.Cont()
			d.closeWindow(p, MonoNow())
		}
	}
	d.topUp(2)
}

// Shutdown sends SIGTERM to the standbys first and then to the owner, so no standby takes over
// during shutdown, and waits for each to drain and exit; a process that takes longer than grace
// is SIGKILLed and reported.
func (d *Driver) Shutdown(grace time.Duration) (stuck []int) {
	d.mu.Lock()
	owner := d.owner()
	var order []*Proc
	for _, p := range d.alive() {
		if p != owner {
			order = append(order, p)
		}
	}
	if owner != nil {
		order = append(order, owner)
	}
	d.mu.Unlock()
	for _, p := range order {
		if !p.WasTermed() { // one SIGTERM drains; a second would mean "exit now"
			p.Term()
		}
		if !p.WaitExit(grace) {
			stuck = append(stuck, p.PID())
			p.Kill()
			p.WaitExit(5 * time.Second)
		}
	}
	return stuck
}

// KillAll SIGKILLs every contender still alive.
func (d *Driver) KillAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.alive() {
		p.Kill()
	}
}

// Records returns the harness's record of every process it started.
func (d *Driver) Records() []ProcRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]ProcRecord, len(d.procs))
	for i, p := range d.procs {
		out[i] = p.Snapshot()
	}
	return out
}

// Windows returns the SIGSTOP windows (End is set for all after Calm).
func (d *Driver) Windows() []Window {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Window(nil), d.windows...)
}

// Counts returns how many times each action ran.
func (d *Driver) Counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := map[string]int{}
	for k, v := range d.counts {
		c[k] = v
	}
	return c
}
