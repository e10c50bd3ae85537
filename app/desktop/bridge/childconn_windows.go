//go:build windows

package bridge

import (
	"fmt"
	"os"
)

// ChildConn is the window process's connection to the app: its standard input and output,
// which the Spawner made the two ends of its pipe pair (os/exec passes only those handles to
// the child, so nothing else inherits them). Later writes to os.Stdout go to stderr, so that
// they cannot corrupt the stream. It returns an error if the null device cannot be opened.
func ChildConn() (*Conn, error) {
	in, out := os.Stdin, os.Stdout
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("window process: %w", err)
	}
	os.Stdin, os.Stdout = null, os.Stderr
	return NewConn(in, out), nil
}
