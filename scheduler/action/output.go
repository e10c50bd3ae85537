package action

import "fmt"

// cappedBuffer keeps the first bytes written to it, up to a limit, and counts the rest, so a
// chatty command cannot fill memory or the journal. Bytes() ends with a note when something was
// dropped; the note fits inside the limit.
type cappedBuffer struct {
	limit   int
	buf     []byte
	dropped int64
}

func newCappedBuffer(limit int) *cappedBuffer { return &cappedBuffer{limit: limit} }

// Write keeps what fits and always reports len(p), so the writer (a child's pipe) never fails.
func (c *cappedBuffer) Write(p []byte) (int, error) {
	n := min(max(c.limit-len(c.buf), 0), len(p))
	c.buf = append(c.buf, p[:n]...)
	c.dropped += int64(len(p) - n)
	return len(p), nil
}

// Bytes returns the kept output; when more was written than the limit, the end of it is
// replaced by "\n[output truncated: N bytes not kept]\n" so that the whole is at most the limit.
func (c *cappedBuffer) Bytes() []byte {
	if c.dropped == 0 {
		return c.buf
	}
	// The note's length depends on the count, which depends on the note's length: size the
	// note for the largest count it can show, then fill in the real number.
	room := len(fmt.Sprintf("\n[output truncated: %d bytes not kept]\n", c.dropped+int64(c.limit)))
	keep := max(c.limit-room, 0)
	dropped := c.dropped + int64(len(c.buf)-keep)
	return append(c.buf[:keep:keep], fmt.Sprintf("\n[output truncated: %d bytes not kept]\n", dropped)...)
}

// capBytes applies the same limit to an output produced in one piece (a diff).
func capBytes(b []byte, limit int) []byte {
	c := newCappedBuffer(limit)
	_, _ = c.Write(b)
	return c.Bytes()
}
