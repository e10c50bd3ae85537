package scheduler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/routinely/routinely/internal/proctest"
	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"

	"github.com/routinely/routinely/scheduler/action"
)

// Child roles of the multi-process tests (the test binary re-executes itself):
//
//	owner-block: owns with epoch $ROUTINELY_TEST_EPOCH; every run blocks until the process dies.
//	owner-fast:  owns; every run succeeds at once. SIGTERM stops it cleanly.
//	request:     asks the owner to run $ROUTINELY_TEST_ROUTINE now and prints the run id.
//	reader:      an observer: reads the journal read-only in a loop for 3 s, exits 1 on any error.
func runChild(role string) int {
	dir := os.Getenv("ROUTINELY_TEST_DIR")
	if role == "reader" {
		return readJournalWhileOwnerWrites(filepath.Join(dir, "journal.db"))
	}
	j, err := journal.Open(filepath.Join(dir, "journal.db"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer j.Close()
	if role == "request" {
		id, err := j.RequestRun(os.Getenv("ROUTINELY_TEST_ROUTINE"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			run, err := j.RequestResult(id)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			if run != 0 {
				fmt.Println(run)
				return 0
			}
		}
		return 3
	}
	epoch, _ := strconv.ParseUint(os.Getenv("ROUTINELY_TEST_EPOCH"), 10, 64)
	e, err := NewEngine(EngineOptions{ConfigPath: filepath.Join(dir, "routines.toml"), Journal: j,
		Gate: newGate(epoch), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	act := &fakeAction{}
	if role == "owner-block" {
		act.block = make(chan struct{}) // never closed: the parent kills us mid-run
	}
	e.newAction = func(*config.Routine) (action.Action, error) { return act, nil }
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	if err := e.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("started")
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = e.Stop(ctx)
	return 0
}

// childCmd prepares the test binary to run role.
func childCmd(role, dir string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ROUTINELY_TEST_CHILD="+role, "ROUTINELY_TEST_DIR="+dir)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// startChild starts the test binary in role with dir and extra environment.
func startChild(t *testing.T, role, dir string, env ...string) *exec.Cmd {
	t.Helper()
	cmd, err := proctest.StartCmd(t, childCmd(role, dir, env...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// readJournalWhileOwnerWrites is the reader role: what `routinely status` and `history` do,
// as fast as it can, beside an owner that writes.
func readJournalWhileOwnerWrites(path string) int {
	j, err := journal.OpenReadOnly(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer j.Close()
	reads := 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); reads++ {
		if _, err := j.History("", 50); err != nil {
			fmt.Fprintln(os.Stderr, "history:", err)
			return 1
		}
		if _, err := j.MaxEpoch(); err != nil {
			fmt.Fprintln(os.Stderr, "max epoch:", err)
			return 1
		}
	}
	fmt.Println(reads)
	return 0
}
