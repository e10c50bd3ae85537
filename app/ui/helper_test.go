package ui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
)

// The test binary re-executes itself as a challenger process (`routinely daemon --takeover` in
// miniature), so the takeover prompt is tested against the real handshake between two processes.
const (
	envHelper = "ROUTINELY_UI_TEST_CHALLENGER"
	envDir    = "ROUTINELY_UI_TEST_DIR"
)

// runHelperIfAsked runs the challenger and exits when the environment asks for it.
func runHelperIfAsked() bool {
	dir := os.Getenv(envDir)
	if os.Getenv(envHelper) == "" || dir == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := ownership.Takeover(ctx, ownership.Options{Dir: dir, Role: ownership.RoleDaemon, Version: "test"},
		ownership.TakeoverOptions{Timeout: 30 * time.Second, Reason: "ui test"})
	switch {
	case errors.Is(err, ownership.ErrDenied):
		fmt.Println("denied")
	case err != nil:
		fmt.Println("error:", err)
	default:
		fmt.Println("owned", h.Epoch())
		_ = h.Release(ctx)
	}
	os.Exit(0)
	return true
}

// challenger is a running helper process; Result waits for its one line of outcome.
type challenger struct {
	cmd   *exec.Cmd
	lines chan string
}

func startChallenger(t *testing.T, dir string) *challenger {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=1", envDir+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &challenger{cmd: cmd, lines: make(chan string, 4)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- strings.TrimSpace(sc.Text())
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return c
}

func (c *challenger) Result(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case l := <-c.lines:
		return l
	case <-time.After(within):
		t.Fatalf("challenger said nothing within %s", within)
	}
	return ""
}

// presenters is the desktop's pair: the tray side and the window side, applied together as the
// desktop does once its window's loop runs.
type presenters struct {
	*Presenter
	Tray *TrayPresenter
	host *trayHost
}

func newPresenters(a fyne.App, acts Actions) *presenters {
	host := &trayHost{}
	return &presenters{
		Presenter: NewPresenter(a.NewWindow("Routinely"), acts),
		Tray:      NewTrayPresenter(host, acts, FyneAlerter{App: a, Sync: true}, nil),
		host:      host,
	}
}

func (p *presenters) Apply(s session.State) {
	p.Tray.Apply(s)
	p.Presenter.Apply(s)
}

// trayHost records what the presenters asked the system tray to show.
type trayHost struct {
	shown int // calls to Show
	menu  *fyne.Menu
	icon  fyne.Resource
}

func (h *trayHost) Show(m *fyne.Menu)       { h.shown++; h.menu = m }
func (h *trayHost) SetIcon(r fyne.Resource) { h.icon = r }
