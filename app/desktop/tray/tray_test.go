//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package tray

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
	"go.uber.org/goleak"
)

const (
	testTitle = "routinely-tray-test"
	itemPath  = "/StatusNotifierItem"      // where systray exports the StatusNotifierItem
	menuPath  = "/StatusNotifierItem/menu" // and its com.canonical.dbusmenu
	menuIface = "com.canonical.dbusmenu"
	wait      = 5 * time.Second
)

var (
	// tr is the process's one Tray (fyne.io/systray is a singleton that cannot start twice), so
	// it lives for the whole test binary, across -count runs, on one private session bus.
	tr     *Tray
	tapped = make(chan struct{}, 8)
	// removedItem was added to systray's menu and removed before the tray started: see orderReads.
	removedItem *systray.MenuItem
)

// TestMain starts a private dbus-daemon for the process (systray connects with
// dbus.SessionBus, so the address must be set before the tray starts) and creates the tray.
// The daemon is killed here rather than in a t.Cleanup because the tray outlives every test.
func TestMain(m *testing.M) {
	if os.Getenv(envBusLoss) != "" {
		os.Exit(busLoss())
	}
	addr, stopBus, err := startBus()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: the tray tests need dbus-daemon on PATH (Debian/Ubuntu package "+
			"dbus; `make deps` installs it): %v\n", err)
		os.Exit(1)
	}
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	tr = New(testTitle, func() { tapped <- struct{}{} }, nil)
	removedItem = systray.AddMenuItem("removed", "")
	removedItem.Remove()

	code := m.Run()
	if err := stopTray(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		code = 1
	}
	stopBus()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines left after Stop:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// envBusLoss makes the test binary run busLoss instead of the tests (a process of its own: the
// tray is a process-wide singleton, and this one's bus dies).
const envBusLoss = "ROUTINELY_TRAY_TEST_BUS_LOSS"

// busLoss starts a tray on a private bus, keeps updating its icon and menu from two goroutines,
// kills the bus daemon under it (as a logout or the end of dbus-run-session does while the app
// drains), goes on updating for a while, then stops the tray. It prints "survived" and returns
// 0 if nothing panicked; a panic kills the process with exit status 2.
func busLoss() int {
	addr, stopBus, err := startBus()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	t := New(testTitle, nil, nil)
	t.Start()
	icons := []fyne.Resource{pngIcon(1), pngIcon(2)}
	menus := []*fyne.Menu{fyne.NewMenu("", fyne.NewMenuItem("a", nil)), fyne.NewMenu("", fyne.NewMenuItem("b", nil), fyne.NewMenuItem("c", nil))}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if g == 0 {
					t.SetIcon(icons[i%2])
				} else {
					t.Show(menus[i%2])
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	stopBus()
	time.Sleep(700 * time.Millisecond) // the shared connection closes once its reader sees EOF
	close(stop)
	wg.Wait()
	t.SetIcon(icons[0])
	t.Show(menus[0])
	t.Stop()
	t.SetIcon(icons[1])
	fmt.Println("survived")
	return 0
}

// pngIcon is a w×1 PNG, so each width is a different icon.
func pngIcon(w int) fyne.Resource {
	var buf bytes.Buffer
	_ = png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, w, 1)))
	return fyne.NewStaticResource(fmt.Sprintf("icon-%d.png", w), buf.Bytes())
}

// The tray survives its session bus ending under it while it is being updated: no panic, and
// Stop still completes (a drain after logout). Mutation check: without live's connection check
// or applyIcon's recover, the helper dies with "panic: dbus: connection closed by user".
func TestBusLossNeverPanics(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envBusLoss+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "survived" {
		t.Fatalf("tray helper: %v, stdout %q, stderr:\n%s", err, out, stderr.String())
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Fatalf("the helper survived but logged a panic:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "the tray item is gone") {
		t.Fatalf("the loss of the bus was not logged:\n%s", stderr.String())
	}
}

// startBus runs dbus-daemon and returns its address and a function that kills it.
func startBus() (string, func(), error) {
	cmd := exec.Command("dbus-daemon", "--session", "--print-address=1", "--nofork", "--nopidfile")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("reading dbus-daemon's address: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// stopTray stops the tray (twice: Stop is idempotent) and checks its bus name went away.
func stopTray() error {
	tr.Stop()
	tr.Stop()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, busName()).Store(&has); err != nil {
		return err
	}
	if has {
		return fmt.Errorf("%s still on the bus after Stop", busName())
	}
	return nil
}

// busName is the well-known name systray requests for this process.
func busName() string { return fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid()) }

func connect(t *testing.T) *dbus.Conn {
	t.Helper()
	conn, err := dbus.ConnectSessionBus() // private: the shared one belongs to systray
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// item is one dbusmenu entry as a host sees it.
type item struct {
	id       int32
	props    map[string]dbus.Variant
	children []item
}

// getLayout reads the whole menu with GetLayout. systray answers the first GetLayout after a
// reset with depth 1 only (a workaround for libdbusmenu-gtk3) and refreshes the layout 150 ms
// later, so it asks twice, after that refresh. The refresh is a data race inside systray
// v1.12.2: its goroutine writes the menu revision holding only systray's instance.lock while
// GetLayout reads it holding only menuLock. So that -race reports races of ours, not that one,
// orderReads runs meanwhile.
func getLayout(t *testing.T, conn *dbus.Conn) (uint32, []item) {
	t.Helper()
	var rev uint32
	var root []interface{}
	stop := orderReads()
	defer stop()
	for i := range 2 {
		if i == 1 {
			time.Sleep(300 * time.Millisecond)
			stop()
		}
		var l struct {
			ID       int32
			Props    map[string]dbus.Variant
			Children []dbus.Variant
		}
		call := conn.Object(busName(), menuPath).Call(menuIface+".GetLayout", 0, int32(0), int32(-1), []string{})
		if err := call.Store(&rev, &l); err != nil {
			t.Fatalf("GetLayout: %v", err)
		}
		root = []interface{}{l.ID, l.Props, l.Children}
	}
	return rev, toItem(t, root).children
}

// orderReads takes systray's menuLock (Hide of an item no longer in the menu: a no-op) and its
// instance.lock (SetTitle with the same title) in turn every few milliseconds until stopped, which
// orders GetLayout's reads of the revision and the delayed refresh's write of it for the race
// detector (each lock hands over happens-before to the next holder).
func orderReads() (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		for {
			removedItem.Hide()
			systray.SetTitle(testTitle)
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-exited }) }
}

func toItem(t *testing.T, v interface{}) item {
	t.Helper()
	f, ok := v.([]interface{})
	if !ok || len(f) != 3 {
		t.Fatalf("layout entry %#v is not (ia{sv}av)", v)
	}
	it := item{id: f[0].(int32), props: f[1].(map[string]dbus.Variant)}
	for _, c := range f[2].([]dbus.Variant) {
		it.children = append(it.children, toItem(t, c.Value()))
	}
	return it
}

// render draws items one per line: "---" separator, "[x] "/"[ ] " checkmark items, " (off)" for
// disabled ones, children indented by two spaces.
func render(items []item, indent string, out *[]string) {
	for _, it := range items {
		if s, _ := it.props["type"].Value().(string); s == "separator" {
			*out = append(*out, indent+"---")
			continue
		}
		line := indent
		if tt, _ := it.props["toggle-type"].Value().(string); tt == "checkmark" {
			if reflect.ValueOf(it.props["toggle-state"].Value()).Int() == 1 {
				line += "[x] "
			} else {
				line += "[ ] "
			}
		}
		line += it.props["label"].Value().(string)
		if on, _ := it.props["enabled"].Value().(bool); !on {
			line += " (off)"
		}
		*out = append(*out, line)
		render(it.children, indent+"  ", out)
	}
}

// ids maps each non-separator label to its dbusmenu id.
func ids(items []item, out map[string]int32) map[string]int32 {
	for _, it := range items {
		if l, ok := it.props["label"].Value().(string); ok {
			out[l] = it.id
		}
		ids(it.children, out)
	}
	return out
}

func assertLayout(t *testing.T, conn *dbus.Conn, want ...string) (uint32, map[string]int32) {
	t.Helper()
	rev, items := getLayout(t, conn)
	var got []string
	render(items, "", &got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("menu layout:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	return rev, ids(items, map[string]int32{})
}

func click(t *testing.T, conn *dbus.Conn, id int32) {
	t.Helper()
	call := conn.Object(busName(), menuPath).Call(menuIface+".Event", 0, id, "clicked", dbus.MakeVariant(""), uint32(0))
	if call.Err != nil {
		t.Fatalf("Event(%d, clicked): %v", id, call.Err)
	}
}

func expectAction(t *testing.T, ran <-chan string, want string) {
	t.Helper()
	select {
	case got := <-ran:
		if got != want {
			t.Fatalf("action %q ran, want %q", got, want)
		}
	case <-time.After(wait):
		t.Fatalf("action %q did not run", want)
	}
}

// propsUpdated collects the ids named by ItemsPropertiesUpdated signals until all of want came.
func propsUpdated(t *testing.T, sigs <-chan *dbus.Signal, want ...int32) {
	t.Helper()
	missing := map[int32]bool{}
	for _, id := range want {
		missing[id] = true
	}
	deadline := time.After(wait)
	for len(missing) > 0 {
		select {
		case s := <-sigs:
			if s.Name != menuIface+".ItemsPropertiesUpdated" {
				continue
			}
			for _, u := range s.Body[0].([][]interface{}) {
				delete(missing, u[0].(int32))
			}
		case <-deadline:
			t.Fatalf("no ItemsPropertiesUpdated for ids %v", missing)
		}
	}
}

func TestMenu(t *testing.T) {
	conn := connect(t)
	if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(menuPath), dbus.WithMatchInterface(menuIface)); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan *dbus.Signal, 256)
	conn.Signal(sigs)

	ran := make(chan string, 16)
	act := func(name string) func() { return func() { ran <- name } }
	owner := fyne.NewMenuItem("Owner: this process", nil)
	owner.Disabled = true
	open := fyne.NewMenuItem("Open", act("open-1"))
	pause := fyne.NewMenuItem("Pause", act("pause"))
	hostA := fyne.NewMenuItem("host-a", act("approve-a"))
	approve := fyne.NewMenuItem("Approve takeover", nil)
	approve.ChildMenu = fyne.NewMenu("", hostA)
	login := fyne.NewMenuItem("Start at login", act("login"))
	login.Checked = true
	quit := fyne.NewMenuItem("Quit", act("quit"))
	quit.IsQuit = true
	menu := fyne.NewMenu("", owner, open, fyne.NewMenuItemSeparator(), pause, approve, login,
		fyne.NewMenuItemSeparator(), quit)

	// The first run shows before Start (kept, built by Start); later -count runs after it.
	tr.Show(menu)
	tr.Start()
	tr.Start()
	rev1, ids1 := assertLayout(t, conn,
		"Owner: this process (off)", "Open", "---", "Pause", "Approve takeover", "  host-a",
		"[x] Start at login", "---", "Quit")

	// Only labels, Disabled, Checked and an action change: updated in place, ids kept.
	for len(sigs) > 0 { // the build's own signals must not satisfy propsUpdated below
		<-sigs
	}
	owner.Label = "Owner: pid 42 on host-b"
	pause.Label, pause.Disabled = "Resume", true
	login.Checked = false
	open.Action = act("open-2")
	tr.Show(menu)
	rev2, ids2 := assertLayout(t, conn,
		"Owner: pid 42 on host-b (off)", "Open", "---", "Resume (off)", "Approve takeover", "  host-a",
		"[ ] Start at login", "---", "Quit")
	if rev2 <= rev1 {
		t.Errorf("layout revision %d after an update, was %d", rev2, rev1)
	}
	for old, now := range map[string]string{"Owner: this process": "Owner: pid 42 on host-b",
		"Pause": "Resume", "Open": "Open", "host-a": "host-a", "Start at login": "Start at login", "Quit": "Quit"} {
		if ids1[old] != ids2[now] {
			t.Errorf("%q has id %d after an in-place update, was %d", now, ids2[now], ids1[old])
		}
	}
	propsUpdated(t, sigs, ids2["Owner: pid 42 on host-b"], ids2["Resume"], ids2["Start at login"])
	click(t, conn, ids2["Open"])
	expectAction(t, ran, "open-2") // the action of the latest Show, not open-1

	// Back and forth in place: Enable and Check again.
	pause.Disabled = false
	login.Checked = true
	tr.Show(menu)
	_, ids3 := assertLayout(t, conn,
		"Owner: pid 42 on host-b (off)", "Open", "---", "Resume", "Approve takeover", "  host-a",
		"[x] Start at login", "---", "Quit")
	if !reflect.DeepEqual(ids2, ids3) {
		t.Errorf("ids changed by an in-place update: %v, were %v", ids3, ids2)
	}

	// Two items inserted: the menu is rebuilt. "Start at login", unchecked now, stays a
	// checkbox because it was checked before; "Run now" never was, so it has none.
	login.Checked = false
	runNow := fyne.NewMenuItem("Run now", act("run-now"))
	hostB := fyne.NewMenuItem("host-b", act("approve-b"))
	approve.ChildMenu.Items = append(approve.ChildMenu.Items, hostB)
	menu.Items = append(menu.Items[:2], append([]*fyne.MenuItem{runNow}, menu.Items[2:]...)...)
	tr.Show(menu)
	_, ids4 := assertLayout(t, conn,
		"Owner: pid 42 on host-b (off)", "Open", "Run now", "---", "Resume", "Approve takeover",
		"  host-a", "  host-b", "[ ] Start at login", "---", "Quit")
	for label, id := range ids4 {
		if old, ok := ids3[label]; ok && old == id {
			t.Errorf("%q kept id %d across a rebuild", label, id)
		}
	}

	// Clicks reach the rebuilt items' current actions, submenu children included; an item
	// without an action ignores clicks. Later mutations of the fyne items do not leak in.
	open.Action = act("open-unshown")
	click(t, conn, ids4["Owner: pid 42 on host-b"])
	click(t, conn, ids4["Run now"])
	expectAction(t, ran, "run-now")
	click(t, conn, ids4["host-b"])
	expectAction(t, ran, "approve-b")
	click(t, conn, ids4["Open"])
	expectAction(t, ran, "open-2")
	click(t, conn, ids4["Quit"])
	expectAction(t, ran, "quit")
	select {
	case extra := <-ran:
		t.Fatalf("unexpected action %q ran", extra)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestItem(t *testing.T) {
	conn := connect(t)
	tr.Start()
	sni := conn.Object(busName(), itemPath)

	img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	tr.SetIcon(fyne.NewStaticResource("icon.png", buf.Bytes()))
	var pix []struct {
		W, H int32
		Pix  []byte
	}
	if err := sni.StoreProperty("org.kde.StatusNotifierItem.IconPixmap", &pix); err != nil {
		t.Fatal(err)
	}
	if len(pix) != 1 || pix[0].W != 3 || pix[0].H != 2 || len(pix[0].Pix) != 3*2*4 {
		t.Errorf("IconPixmap %+v, want one 3x2 ARGB pixmap", pix)
	}
	for prop, want := range map[string]interface{}{"Title": testTitle, "Id": testTitle, "ItemIsMenu": false} {
		v, err := sni.GetProperty("org.kde.StatusNotifierItem." + prop)
		if err != nil {
			t.Fatal(err)
		}
		if v.Value() != want {
			t.Errorf("%s = %v, want %v", prop, v.Value(), want)
		}
	}

	if call := sni.Call("org.kde.StatusNotifierItem.Activate", 0, int32(0), int32(0)); call.Err != nil {
		t.Fatalf("Activate: %v", call.Err)
	}
	select {
	case <-tapped:
	case <-time.After(wait):
		t.Fatal("Activate did not run onTapped")
	}
}
