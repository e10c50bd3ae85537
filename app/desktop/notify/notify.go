//go:build linux || freebsd || openbsd || netbsd

// Package notify sends the desktop app's notifications on Linux and the BSDs through the
// org.freedesktop.Notifications service on the session bus (Desktop Notifications
// Specification 1.2, https://specifications.freedesktop.org/notification-spec/latest/), and
// withdraws them with CloseNotification. Fyne's own notifier discards the id that Notify
// returns, so a notification it sent can never be taken back, and it always shows the app's
// icon; this package keeps the id and sends its own icon for warnings. It imports no UI.
package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// The service's well-known name, object and interface (the specification's "D-BUS Protocol").
const (
	service = "org.freedesktop.Notifications"
	object  = "/org/freedesktop/Notifications"
	iface   = "org.freedesktop.Notifications"
)

// callTimeout bounds every call to the service: a notification daemon that hangs must not stall
// the queue for long.
const callTimeout = 5 * time.Second

// closeWait bounds how long Close waits for the queue to be sent.
const closeWait = callTimeout

// queueLen bounds the notifications and withdrawals waiting to be sent. Alerts come at human
// rates; a full queue means the service is not answering, and dropping is better than growing.
const queueLen = 64

// ErrBadIcon: an icon given to New is not a PNG.
var ErrBadIcon = errors.New("notify: icon is not a PNG")

// Notice is one notification.
type Notice struct {
	Title, Body string
	Warning     bool // shown with the warning icon
}

// Options configure a Notifier.
type Options struct {
	AppName      string // the app_name parameter ("Routinely")
	DesktopEntry string // the desktop-entry hint: the .desktop file's name without ".desktop"
	Icon         []byte // PNG for ordinary notifications
	WarningIcon  []byte // PNG for warnings
	Logger       *slog.Logger
}

// Notifier sends notifications in order on its own goroutine and its own session-bus
// connection (a private one: fyne.io/systray closes the shared one when the tray ends). Its
// methods are safe for concurrent use and never wait for the service.
type Notifier struct {
	opts        Options
	icon, alarm imageData
	log         *slog.Logger
	done        chan struct{} // closed when the worker has ended

	mu     sync.Mutex // guards jobs against a send after Close
	jobs   chan job
	closed bool

	// Owned by the worker goroutine only.
	conn   *dbus.Conn
	markup bool // the service renders body markup, so the body's &, < and > are escaped
}

// job is one send (notice set) or one withdrawal of an earlier send.
type job struct {
	notice   *Notice
	sent     *sent
	withdraw bool
}

// sent is one notification as the worker knows it: the id the service gave it (0: none, the
// send failed or was dropped).
type sent struct{ id uint32 }

// imageData is the image-data hint (iiibiiay: width, height, rowstride, has alpha, bits per
// sample, channels, RGBA bytes), from the specification's "Icons and Images".
type imageData struct {
	W, H, Stride int32
	Alpha        bool
	Bits, Chans  int32
	Data         []byte
}

// New starts a Notifier. It connects on the first notification, and again after the bus
// connection is lost. It returns ErrBadIcon (wrapped) if an icon is not a PNG.
func New(opts Options) (*Notifier, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	icon, err := toImageData(opts.Icon)
	if err != nil {
		return nil, err
	}
	alarm, err := toImageData(opts.WarningIcon)
	if err != nil {
		return nil, err
	}
	n := &Notifier{opts: opts, icon: icon, alarm: alarm, log: opts.Logger,
		jobs: make(chan job, queueLen), done: make(chan struct{})}
	go n.work()
	return n, nil
}

// Send queues nt and returns the function that withdraws it. Withdrawing is idempotent and may
// come at any time: before the service has shown the notification, the withdrawal waits its turn
// behind the send; after Close it does nothing.
func (n *Notifier) Send(nt Notice) (withdraw func()) {
	s := &sent{}
	if !n.queue(job{notice: &nt, sent: s}) {
		return func() {}
	}
	var once sync.Once
	return func() { once.Do(func() { n.queue(job{sent: s, withdraw: true}) }) }
}

// queue hands j to the worker without blocking; it reports whether j was queued.
func (n *Notifier) queue(j job) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	select {
	case n.jobs <- j:
		return true
	default:
		n.log.Warn("notification dropped: the notification service is not keeping up")
		return false
	}
}

// Close sends what is queued, then closes the connection; it waits for that at most
// closeWait, so an app that quits is never held up by a notification service that hangs (the
// worker then ends with the process). Idempotent.
func (n *Notifier) Close() {
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.jobs)
	}
	n.mu.Unlock()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-n.done:
	case <-t.C:
		n.log.Warn("notifications still queued at exit were not sent: the notification service does not answer")
	}
}

func (n *Notifier) work() {
	defer close(n.done)
	defer func() {
		if n.conn != nil {
			n.conn.Close()
		}
	}()
	// Connect at once: the first call to the service may start it (D-Bus activation), which can
	// take a second, and the first notification (a takeover request) should not wait for that.
	_, _ = n.connect()
	for j := range n.jobs {
		if j.withdraw {
			n.withdraw(j.sent)
			continue
		}
		n.send(*j.notice, j.sent)
	}
}

// connect returns the worker's connection, opening it (and asking the service whether it
// renders markup) when there is none or it was lost.
func (n *Notifier) connect() (*dbus.Conn, error) {
	if n.conn != nil && n.conn.Connected() {
		return n.conn, nil
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("connect to the session bus: %w", err)
	}
	n.conn = conn
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var caps []string
	if err := conn.Object(service, object).CallWithContext(ctx, iface+".GetCapabilities", 0).Store(&caps); err == nil {
		n.markup = slices.Contains(caps, "body-markup")
	}
	return conn, nil
}

func (n *Notifier) send(nt Notice, s *sent) {
	conn, err := n.connect()
	if err != nil {
		n.log.Warn("notification not sent", "title", nt.Title, "err", err)
		return
	}
	icon, img := "", n.icon
	if nt.Warning {
		// A named icon from the Icon Naming Specification, for services that ignore image-data.
		icon, img = "dialog-warning", n.alarm
	}
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(1))}
	if n.opts.DesktopEntry != "" {
		hints["desktop-entry"] = dbus.MakeVariant(n.opts.DesktopEntry)
	}
	if img.W > 0 {
		hints["image-data"] = dbus.MakeVariant(img)
	}
	body := nt.Body
	if n.markup {
		body = escapeMarkup(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	call := conn.Object(service, object).CallWithContext(ctx, iface+".Notify", 0,
		n.opts.AppName, uint32(0), icon, nt.Title, body, []string{}, hints, int32(-1))
	if err := call.Store(&s.id); err != nil {
		n.log.Warn("notification not sent", "title", nt.Title, "err", err)
	}
}

func (n *Notifier) withdraw(s *sent) {
	if s.id == 0 {
		return // never shown
	}
	id := s.id
	s.id = 0
	conn, err := n.connect()
	if err != nil {
		return // the bus is gone, and with it the notification
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	// The service may have closed it already (expired, dismissed): that is not an error worth
	// a word, the notification is gone either way.
	_ = conn.Object(service, object).CallWithContext(ctx, iface+".CloseNotification", 0, id).Err
}

// escapeMarkup escapes the characters the specification's body markup gives a meaning to.
func escapeMarkup(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// toImageData decodes a PNG into the image-data hint's layout (nil: no image).
func toImageData(b []byte) (imageData, error) {
	if len(b) == 0 {
		return imageData{}, nil
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return imageData{}, fmt.Errorf("%w: %w", ErrBadIcon, err)
	}
	r := img.Bounds()
	rgba := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(rgba, rgba.Bounds(), img, r.Min, draw.Src)
	return imageData{W: int32(r.Dx()), H: int32(r.Dy()), Stride: int32(rgba.Stride), Alpha: true,
		Bits: 8, Chans: 4, Data: rgba.Pix}, nil
}
