// Package instance keeps one desktop app per profile. The first launch on a state directory
// becomes the profile's app: it holds the exclusive OS lock on desktop.lock and listens on the
// socket desktop.sock beside it. A later launch on the same directory finds the lock taken,
// asks the running app over the socket to show its window, and exits. Two profiles (two state
// directories) are two apps.
//
// It works the same on Linux, macOS and Windows (AF_UNIX sockets exist on Windows 10 1803 and
// later), and it imports no UI. The socket is safe to put in the state directory because that
// directory is vetted at start-up (ownership.StateDir: owned by this user, no group or world
// write, see docs/design.md#2-state-directory), so no other user can plant, replace or connect to
// anything in it.
//
// Crash rules: the kernel drops the lock when its holder dies, however it dies. A socket file
// left by a SIGKILL-ed app is harmless: only the lock holder may serve the socket, so the next
// app to take the lock removes the stale file before it listens. Nothing here ever needs a
// person to delete a file.
package instance

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/routinely/routinely/internal/atomicfile"
)

// File names in the state directory.
const (
	// LockName is the instance lock: created once (0600), never written or deleted; only the
	// exclusive lock on it matters, as for owner.lock.
	LockName = "desktop.lock"
	// SocketName is where the running app listens; it is removed when the app ends cleanly, and
	// replaced by the next app after a crash.
	SocketName = "desktop.sock"
)

// Timing. A launch is a person's click, so everything here is bounded in seconds.
const (
	// Patience is how long a launch keeps trying to reach the app that holds the lock (it may
	// be between taking the lock and listening, or releasing both as it quits) before Claim
	// returns ErrNotAnswering.
	Patience = 5 * time.Second
	// ioTimeout bounds one exchange on the socket, on both sides: a peer that connects and
	// says nothing (or a stopped app) never holds the other up longer than this.
	ioTimeout = 2 * time.Second
	// retryEvery is the pause between two attempts while the lock holder does not answer yet.
	retryEvery = 50 * time.Millisecond
	// maxSocketPath is the longest socket path every supported system takes: sun_path holds 104
	// bytes on macOS and the BSDs and 108 on Linux and Windows, including the final NUL.
	maxSocketPath = 103
	// maxLine bounds what either side reads: requests and replies are one short line.
	maxLine = 64
	// maxPeers bounds the launches answered at once, so a peer that connects and stays silent
	// never delays the next one.
	maxPeers = 8
)

// The wire protocol: one request line from the launch, one reply line from the app, then both
// close. "show" asks for the window; "start" (a --background launch, e.g. autostart at login)
// only checks that the app runs. The reply is "ok <pid>".
const (
	reqShow  = "show"
	reqStart = "start"
	replyOK  = "ok"
)

// Sentinel errors.
var (
	// ErrRunning: another process is the profile's desktop app and was asked to show its window
	// (or, for a background launch, answered that it runs). The launch should exit 0. Claim
	// returns it as a *RunningError.
	ErrRunning = errors.New("the desktop app already runs for this profile")
	// ErrNotAnswering: the lock is held but its holder did not answer on the socket within
	// Patience (it is stopped, wedged, or not a Routinely that speaks this protocol).
	ErrNotAnswering = errors.New("the desktop app that holds this profile does not answer")
	// ErrLockFile: desktop.lock is not a regular file (a named pipe, a directory, a device).
	ErrLockFile = errors.New("the instance lock is not usable")
	// ErrSocketPath: the state directory's path is too long for a socket address.
	ErrSocketPath = errors.New("the state directory's path is too long for the instance socket")
)

// RunningError is Claim's answer when another app already runs for the profile.
type RunningError struct {
	PID int // the running app's process id, as it reported it
}

func (e *RunningError) Error() string { return fmt.Sprintf("%v (pid %d)", ErrRunning, e.PID) }

// Unwrap makes errors.Is(err, ErrRunning) true.
func (e *RunningError) Unwrap() error { return ErrRunning }

// Primary is this process as the profile's one desktop app: it holds the lock and the socket
// until Close. A nil *Primary is valid and does nothing (the app runs without the single-instance
// check when it could not be set up).
type Primary struct {
	lock *flock.Flock
	ln   net.Listener

	closeOnce sync.Once
	served    sync.WaitGroup
}

// Claim makes this process the desktop app of the profile whose (vetted, canonical) state
// directory is dir, or hands the launch to the app that already is. show says what the launch
// wants: true asks the running app to show its window, false only checks that it runs.
//
// It returns a *Primary when this process is now the profile's app (call Serve, then Close);
// or nil and a *RunningError (errors.Is ErrRunning) when another app answered; or nil and an
// error wrapping ErrNotAnswering when the lock holder did not answer within patience
// (0: Patience); or ErrSocketPath (wrapped) for a directory path too long for a socket; or
// ErrLockFile (wrapped) when desktop.lock is not a regular file; or the
// I/O error of the lock file or the socket (wrapped, naming the file).
func Claim(dir string, show bool, patience time.Duration) (*Primary, error) {
	if patience <= 0 {
		patience = Patience
	}
	sock := filepath.Join(dir, SocketName)
	if len(sock) > maxSocketPath {
		return nil, fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrSocketPath, sock, len(sock), maxSocketPath)
	}
	deadline := time.Now().Add(patience)
	for {
		p, err := tryPrimary(dir, sock)
		if err != nil || p != nil {
			return p, err
		}
		pid, askErr := ask(sock, show)
		if askErr == nil {
			return nil, &RunningError{PID: pid}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w within %s: %v", ErrNotAnswering, patience, askErr)
		}
		time.Sleep(retryEvery)
	}
}

// tryPrimary makes one attempt at the lock. Holding it, it replaces whatever lies at sock (a
// socket left by a crashed app: only the lock holder ever serves there) with its own listener.
// It returns (nil, nil) when another process holds the lock.
func tryPrimary(dir, sock string) (*Primary, error) {
	path := filepath.Join(dir, LockName)
	// Never blocks (a named pipe there would wait for a writer) and never follows a symbolic link.
	lock := flock.New(path, flock.SetPermissions(0o600), flock.SetFlag(os.O_CREATE|os.O_RDONLY|atomicfile.NoFollow))
	ok, err := lock.TryLock()
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, notLockFile(path, fi)
		}
		return nil, fmt.Errorf("instance lock %s: %w", path, err)
	}
	if !ok {
		return nil, nil
	}
	// A named pipe or a device opens and locks too: only a regular file is the lock.
	if fi, err := lock.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = lock.Unlock()
		if err != nil {
			return nil, fmt.Errorf("instance lock %s: %w", path, err)
		}
		return nil, notLockFile(path, fi)
	}
	if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = lock.Unlock()
		return nil, fmt.Errorf("remove the stale instance socket %s: %w", sock, err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		_ = lock.Unlock()
		return nil, fmt.Errorf("instance socket %s: %w", sock, err)
	}
	// The directory is private already; this keeps the socket private if it is ever moved.
	_ = os.Chmod(sock, 0o600)
	return &Primary{lock: lock, ln: ln}, nil
}

// notLockFile is the refusal of a desktop.lock that is not a regular file. It is never replaced
// automatically: two launches doing so at once could each lock a different file.
func notLockFile(path string, fi fs.FileInfo) error {
	return fmt.Errorf("%w: %s is not a regular file (mode %s); remove it (`rm %s`) while Routinely is not running",
		ErrLockFile, path, fi.Mode(), path)
}

// ask sends one request to the app listening at sock and returns the pid it reports.
func ask(sock string, show bool) (int, error) {
	conn, err := net.DialTimeout("unix", sock, ioTimeout)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(ioTimeout))
	req := reqStart
	if show {
		req = reqShow
		allowForeground()
	}
	if _, err := io.WriteString(conn, req+"\n"); err != nil {
		return 0, err
	}
	line, err := readLine(conn)
	if err != nil {
		return 0, fmt.Errorf("read the reply: %w", err)
	}
	word, pidText, _ := strings.Cut(line, " ")
	pid, err := strconv.Atoi(pidText)
	if word != replyOK || err != nil || pid <= 0 {
		return 0, fmt.Errorf("unexpected reply %q", line)
	}
	return pid, nil
}

// Serve answers launches on goroutines of its own until Close: onShow (may be nil) runs for each
// launch that asks for the window, possibly on several goroutines at once, and must return
// quickly (the tray's "Open" action does: it hands the work to the UI). Call it once; a nil
// *Primary does nothing.
func (p *Primary) Serve(onShow func()) {
	if p == nil {
		return
	}
	p.served.Add(1)
	go func() {
		defer p.served.Done()
		busy := make(chan struct{}, maxPeers)
		for {
			conn, err := p.ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return // Close
			}
			if err != nil { // e.g. out of file descriptors: try again shortly
				time.Sleep(retryEvery)
				continue
			}
			select {
			case busy <- struct{}{}:
			default: // maxPeers launches at once: a flood, not people clicking
				conn.Close()
				continue
			}
			p.served.Add(1)
			go func() {
				defer func() { <-busy; p.served.Done() }()
				answer(conn, onShow)
			}()
		}
	}()
}

// answer handles one launch: garbage, silence and oversized lines are dropped within ioTimeout.
func answer(conn net.Conn, onShow func()) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(ioTimeout))
	req, err := readLine(conn)
	if err != nil || (req != reqShow && req != reqStart) {
		return
	}
	if req == reqShow && onShow != nil {
		onShow()
	}
	_, _ = fmt.Fprintf(conn, "%s %d\n", replyOK, os.Getpid())
}

// readLine reads one line of at most maxLine bytes, without its newline.
func readLine(r io.Reader) (string, error) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, maxLine), maxLine).ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// Close stops answering, removes the socket and releases the lock, so the next launch becomes
// the profile's app. The app calls it as soon as it starts quitting: a launch during the drain
// starts a new app, which stands by until the quitting one has released the routines.
// Idempotent; a nil *Primary does nothing.
func (p *Primary) Close() {
	if p == nil {
		return
	}
	p.closeOnce.Do(func() {
		_ = p.ln.Close() // also unlinks the socket file (net.UnixListener removes what it created)
		p.served.Wait()
		_ = p.lock.Unlock()
	})
}
