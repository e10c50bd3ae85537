// Package syncbuf provides a bytes.Buffer that goroutines may write while another reads it (a
// logger or a child process writing while a test inspects the output).
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a goroutine-safe bytes.Buffer; the zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails (bytes.Buffer's rule).
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
