//go:build linux && wine

package e2e

// Built only with -tags wine, by `make test-windows` (tools/wine/test-windows.sh), which sets
// $WINE, $WINEPREFIX and $ROUTINELY_E2E_WINE_EXE (the nogui routinely.exe). These tests run on
// the Linux side and drive routinely.exe under Wine as a person at a Linux shell would, so that
// the owner's Wine process can be SIGKILLed for real (inside Wine, a Windows program can only
// ask for TerminateProcess, which Wine carries out as an orderly exit of the Unix process).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// desktopExeVar names the desktop build of routinely.exe (cgo, mingw), which test-windows.sh
// builds for the login-item tests.
const desktopExeVar = "ROUTINELY_E2E_WINE_DESKTOP_EXE"

// wineCmd is `wine routinely.exe --home (home as Windows sees it) args...`, with the nogui
// routinely.exe ($ROUTINELY_E2E_WINE_EXE).
func wineCmd(t *testing.T, ctx context.Context, home string, args ...string) *exec.Cmd {
	t.Helper()
	return wineCmdOf(t, ctx, "ROUTINELY_E2E_WINE_EXE", home, args...)
}

// wineCmdOf is wineCmd with the routinely.exe named by the environment variable exeVar.
func wineCmdOf(t *testing.T, ctx context.Context, exeVar, home string, args ...string) *exec.Cmd {
	t.Helper()
	wine, exe := os.Getenv("WINE"), os.Getenv(exeVar)
	if wine == "" || exe == "" {
		t.Fatalf("WINE and %s must be set: run these tests through make test-windows", exeVar)
	}
	// Wine's default prefix maps drive Z: to the Unix root.
	winHome := `Z:` + strings.ReplaceAll(home, "/", `\`)
	cmd := exec.CommandContext(ctx, wine, append([]string{exe, "--home", winHome}, args...)...)
	cmd.Env = testEnv()
	// A Wine process that starts wineserver or Wine's services hands them its stdout and stderr,
	// and they outlive it: stop waiting for the pipes shortly after the process itself exits.
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// wineRun runs the nogui routinely.exe to completion and returns its stdout, stderr and exit
// code.
func wineRun(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	return wineRunOf(t, "ROUTINELY_E2E_WINE_EXE", home, args...)
}

// wineRunOf is wineRun with the routinely.exe named by the environment variable exeVar.
func wineRunOf(t *testing.T, exeVar, home string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := wineCmdOf(t, ctx, exeVar, home, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("routinely.exe %v did not finish in %s; stderr:\n%s", args, cmdTimeout, stderr.String())
	}
	if errors.Is(err, exec.ErrWaitDelay) { // exited; a Wine service kept its output open
		return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
	}
	return stdout.String(), stderr.String(), exitCode(err)
}

// waitRecord polls owner.json in home until ok accepts it, failing after ownDeadline.
func waitRecord(t *testing.T, home, want string, ok func(ownerRecord) bool) ownerRecord {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for {
		if r, read := readOwnerRecord(home); read && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			r, _ := readOwnerRecord(home)
			t.Fatalf("owner.json after %s: %+v; want %s", ownDeadline, r, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Under Wine: a second daemon exits 75 naming the first; the owner's Wine process SIGKILLed, a
// `daemon --wait` standby owns within 2 s with epoch + 1.
func TestWineSIGKILLedOwnerStandbyOwns(t *testing.T) {
	home := newHome(t, hourly)
	owner := startCmd(t, wineCmd(t, context.Background(), home, "daemon"), "routinely.exe daemon")
	r1 := waitRecord(t, home, "an owner", func(r ownerRecord) bool { return r.PID > 0 })

	_, stderr, code := wineRun(t, home, "daemon")
	if code != 75 || !strings.Contains(stderr, fmt.Sprintf("pid %d", r1.PID)) || !strings.Contains(stderr, fmt.Sprintf("epoch %d", r1.Epoch)) {
		t.Fatalf("second daemon: exit %d, want 75 naming pid %d epoch %d; stderr:\n%s", code, r1.PID, r1.Epoch, stderr)
	}

	standby := startCmd(t, wineCmd(t, context.Background(), home, "daemon", "--wait"), "routinely.exe daemon --wait")
	standby.waitStderr("Standing by", ownDeadline)
	killedAt := time.Now()
	if err := owner.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-owner.done
	if ws, ok := owner.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the owner's Wine process ended by %v, not by SIGKILL", owner.cmd.ProcessState)
	}
	r2 := waitRecord(t, home, fmt.Sprintf("the standby owning with epoch %d", r1.Epoch+1), func(r ownerRecord) bool { return r.PID != r1.PID })
	if r2.Epoch != r1.Epoch+1 {
		t.Errorf("epoch after the takeover = %d, want %d", r2.Epoch, r1.Epoch+1)
	}
	// acquired_at is stamped by the standby itself, so polling does not blur it.
	took := r2.AcquiredAt.Sub(killedAt)
	if took > 2*time.Second {
		t.Errorf("the standby owned %s after the SIGKILL, want ≤ 2 s", took)
	}
	t.Logf("the standby (pid %d) owned %s after the SIGKILL of the owner (pid %d), epoch %d → %d", r2.PID, took.Round(time.Millisecond), r1.PID, r1.Epoch, r2.Epoch)
}

// Under Wine: the desktop build's `autostart enable` writes the Run value that `wine reg query`
// shows; `disable` removes it (the nogui build refuses to write a login item it could not start).
// The prefix is the test run's own, so no one's login item is touched.
func TestWineAutostartRunKey(t *testing.T) {
	home := newHome(t, hourly)
	if out, errOut, code := wineRunOf(t, desktopExeVar, home, "autostart", "enable"); code != 0 {
		t.Fatalf("autostart enable: exit %d\n%s%s", code, out, errOut)
	}
	query := func() (string, error) {
		out, err := exec.Command(os.Getenv("WINE"), "reg", "query", `HKCU\Software\Microsoft\Windows\CurrentVersion\Run`, "/v", "Routinely").CombinedOutput()
		return string(out), err
	}
	out, err := query()
	if err != nil || !strings.Contains(out, "REG_SZ") || !strings.Contains(out, filepath.Base(os.Getenv(desktopExeVar))+`" --background`) {
		t.Fatalf("wine reg query after enable (%v):\n%s", err, out)
	}
	if out, errOut, code := wineRunOf(t, desktopExeVar, home, "autostart", "disable"); code != 0 {
		t.Fatalf("autostart disable: exit %d\n%s%s", code, out, errOut)
	}
	out, err = query()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("wine reg query after disable: %v, want exit 1 (no such value):\n%s", err, out)
	}
}
