package bridge

import (
	"errors"
	"io"
	"net/rpc"

	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// Client is the window process's side: it implements Actions by calling the parent, and Next
// waits for the parent's news. Its methods are safe for concurrent use. Once the connection
// has ended (the parent exited or ended this window), every call returns ErrDisconnected
// (wrapped); the window process then exits.
type Client struct {
	rpc *rpc.Client
	// onError (may be nil) sees the error of an action whose method returns none (TakeBack,
	// Quit): the window cannot show it otherwise.
	onError func(error)
}

// ErrDisconnected is returned once the connection to the app has ended.
var ErrDisconnected = errors.New("the connection to the Routinely app has ended")

// NewClient returns a client calling the parent over conn; onError (may be nil) sees the
// failures of actions that return no error.
func NewClient(conn io.ReadWriteCloser, onError func(error)) *Client {
	return &Client{rpc: rpc.NewClient(conn), onError: onError}
}

// Close ends the connection.
func (c *Client) Close() error { return c.rpc.Close() }

// call calls the parent's method and translates the end of the connection.
func (c *Client) call(method string, args, reply any) error {
	err := c.rpc.Call(serviceName+"."+method, args, reply)
	var se rpc.ServerError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return errors.New(string(se)) // the action's own error, as text
	case errors.Is(err, rpc.ErrShutdown), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ErrDisconnected
	}
	return errors.Join(ErrDisconnected, err)
}

// Next waits for news newer than c (see Feed) and returns it. It returns ErrDisconnected
// (possibly joined with the transport's error) once the connection has ended.
func (c *Client) Next(cur Cursor) (Update, error) {
	var u Update
	err := c.call("Next", cur, &u)
	return u, err
}

// Decide answers the takeover request requestID.
func (c *Client) Decide(requestID string, approve bool) error {
	return c.call("Decide", DecideArgs{RequestID: requestID, Approve: approve}, &Empty{})
}

// RunNow asks for a run of routine now.
func (c *Client) RunNow(routine string) error { return c.call("RunNow", routine, &Empty{}) }

// SetPaused pauses or resumes routine ("" = all).
func (c *Client) SetPaused(routine string, paused bool) error {
	return c.call("SetPaused", PauseArgs{Routine: routine, Paused: paused}, &Empty{})
}

// TakeBack asks the owner to hand the routines back.
func (c *Client) TakeBack() { c.report(c.call("TakeBack", Empty{}, &Empty{})) }

// EndStuckOwner asks the app to end the stuck owner pid and own the routines.
func (c *Client) EndStuckOwner(pid int) error { return c.call("EndStuckOwner", pid, &Empty{}) }

// SetStartAtLogin installs or removes the login item.
func (c *Client) SetStartAtLogin(on bool) error { return c.call("SetStartAtLogin", on, &Empty{}) }

// SetPolicy saves the takeover policy.
func (c *Client) SetPolicy(p ownership.Policy) error { return c.call("SetPolicy", p, &Empty{}) }

// OpenConfig asks the app to open routines.toml; the error says why nothing opened.
func (c *Client) OpenConfig() error { return c.call("OpenConfig", Empty{}, &Empty{}) }

// Quit asks the app to quit.
func (c *Client) Quit() { c.report(c.call("Quit", Empty{}, &Empty{})) }

// History returns routine's runs (at most limit), newest first.
func (c *Client) History(routine string, limit int) ([]journal.Run, error) {
	var runs []journal.Run
	err := c.call("History", HistoryArgs{Routine: routine, Limit: limit}, &runs)
	return runs, err
}

// Output returns a run's captured output.
func (c *Client) Output(runID int64) ([]byte, error) {
	var out []byte
	err := c.call("Output", runID, &out)
	return out, err
}

func (c *Client) report(err error) {
	if err != nil && c.onError != nil {
		c.onError(err)
	}
}

var _ Actions = (*Client)(nil)
