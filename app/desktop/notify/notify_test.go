//go:build linux || freebsd || openbsd || netbsd

package notify

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"go.uber.org/goleak"
)

// The tests run a private dbus-daemon and, on it, a notification service of their own that
// records the calls it gets (as a notification daemon would receive them).
func TestMain(m *testing.M) {
	cmd := exec.Command("dbus-daemon", "--session", "--print-address=1", "--nofork", "--nopidfile")
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: the notify tests need dbus-daemon on PATH (Debian/Ubuntu package dbus): %v\n", err)
		os.Exit(1)
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: reading dbus-daemon's address:", err)
		os.Exit(1)
	}
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
	code := m.Run()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines left:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// server is a fake org.freedesktop.Notifications that logs "notify ID TITLE|BODY|ICON" and
// "close ID" lines.
type server struct {
	conn *dbus.Conn
	mu   sync.Mutex
	log  []string
	hint map[uint32]map[string]dbus.Variant
	next uint32
	caps []string
	wait chan struct{} // when set, Notify blocks until it is closed (a slow daemon)
}

func (s *server) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	if s.wait != nil {
		<-s.wait
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.log = append(s.log, fmt.Sprintf("notify %d %s|%s|%s", s.next, summary, body, icon))
	s.hint[s.next] = hints
	return s.next, nil
}

func (s *server) CloseNotification(id uint32) *dbus.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, fmt.Sprintf("close %d", id))
	return nil
}

func (s *server) GetCapabilities() ([]string, *dbus.Error) { return s.caps, nil }

func startServer(t *testing.T, caps ...string) *server { return startSlowServer(t, nil, caps...) }

// startSlowServer is startServer whose Notify waits until wait is closed (nil: no wait).
func startSlowServer(t *testing.T, wait chan struct{}, caps ...string) *server {
	t.Helper()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{conn: conn, hint: map[uint32]map[string]dbus.Variant{}, caps: caps, wait: wait}
	if err := conn.Export(s, object, iface); err != nil {
		t.Fatal(err)
	}
	if r, err := conn.RequestName(service, dbus.NameFlagDoNotQueue); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName %s: %v %v", service, r, err)
	}
	t.Cleanup(func() { conn.Close() })
	return s
}

// expect waits until the server's log is want.
func (s *server) expect(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := strings.Join(s.log, "\n")
		s.mu.Unlock()
		if got == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pngOf(w, h int) []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, w, h)))
	return b.Bytes()
}

func newNotifier(t *testing.T) *Notifier {
	t.Helper()
	n, err := New(Options{AppName: "Routinely", DesktopEntry: "io.routinely.app", Icon: pngOf(4, 2),
		WarningIcon: pngOf(3, 3), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// A notification withdrawn is closed by the id the service gave it; a second withdrawal does
// nothing; a warning carries the warning icon, an ordinary one the app's.
func TestSendAndWithdraw(t *testing.T) {
	s := startServer(t, "body")
	n := newNotifier(t)
	w1 := n.Send(Notice{Title: "Routinely: takeover request", Body: "A daemon asks"})
	n.Send(Notice{Title: "backup failed", Body: "exit status 3", Warning: true})
	s.expect(t, "notify 1 Routinely: takeover request|A daemon asks|", "notify 2 backup failed|exit status 3|dialog-warning")
	w1()
	w1()
	s.expect(t, "notify 1 Routinely: takeover request|A daemon asks|", "notify 2 backup failed|exit status 3|dialog-warning", "close 1")

	s.mu.Lock()
	defer s.mu.Unlock()
	for id, size := range map[uint32]int32{1: 4, 2: 3} {
		var img imageData
		if err := dbus.Store([]interface{}{s.hint[id]["image-data"].Value()}, &img); err != nil {
			t.Fatalf("notification %d: image-data: %v", id, err)
		}
		if img.W != size || img.Chans != 4 || len(img.Data) != int(img.Stride*img.H) {
			t.Errorf("notification %d: image-data %dx%d stride %d, %d bytes; want width %d", id, img.W, img.H, img.Stride, len(img.Data), size)
		}
		if e := s.hint[id]["desktop-entry"].Value(); e != "io.routinely.app" {
			t.Errorf("notification %d: desktop-entry %v", id, e)
		}
	}
}

// A withdrawal made before the service has even answered the Notify waits its turn and closes
// the notification once it exists (a request denied at once, a slow daemon).
func TestWithdrawBeforeDelivery(t *testing.T) {
	wait := make(chan struct{})
	s := startSlowServer(t, wait)
	n := newNotifier(t)
	withdraw := n.Send(Notice{Title: "t", Body: "b"})
	withdraw()
	close(wait)
	s.expect(t, "notify 1 t|b|", "close 1")
}

// A service that renders markup gets the body escaped, so an error text with < or & shows as
// written.
func TestBodyEscapedForMarkup(t *testing.T) {
	s := startServer(t, "body", "body-markup")
	n := newNotifier(t)
	n.Send(Notice{Title: "ping failed", Body: `GET http://x/?a=1&b=<2>: refused`})
	s.expect(t, "notify 1 ping failed|GET http://x/?a=1&amp;b=&lt;2&gt;: refused|")
}

// With no notification service on the bus, Send and withdraw return at once and nothing is
// left running after Close; after Close, Send does nothing.
func TestNoServiceNeverBlocks(t *testing.T) {
	n := newNotifier(t)
	start := time.Now()
	w := n.Send(Notice{Title: "t"})
	w()
	n.Close()
	if took := time.Since(start); took > 2*callTimeout {
		t.Fatalf("took %s without a service", took)
	}
	n.Send(Notice{Title: "after close"})()
}

func TestBadIcon(t *testing.T) {
	if _, err := New(Options{Icon: []byte("not a png")}); err == nil {
		t.Fatal("New accepted an icon that is not a PNG")
	}
}

// Close does not wait longer than closeWait for a service that does not answer (the app is
// quitting); the worker ends once the service answers or the call times out.
func TestCloseBoundedWithAHungService(t *testing.T) {
	wait := make(chan struct{})
	s := startSlowServer(t, wait)
	n, err := New(Options{AppName: "Routinely", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	n.Send(Notice{Title: "t"})
	n.Send(Notice{Title: "u"})
	start := time.Now()
	n.Close()
	if took := time.Since(start); took > closeWait+time.Second {
		t.Fatalf("Close took %s with a hung service", took)
	}
	close(wait)
	<-n.done // the worker ends once the service answers
	_ = s
}
