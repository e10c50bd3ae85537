//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
)

// The README's performance section lies between these markers; everything between them is
// replaced by the latest table.
const (
	markStart = "<!-- bench:start -->"
	markEnd   = "<!-- bench:end -->"
)

// UpdateReadme replaces the text between the markers in path with table.
func UpdateReadme(path string, table []byte) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i := bytes.Index(b, []byte(markStart))
	j := bytes.Index(b, []byte(markEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %s … %s section to fill", path, markStart, markEnd)
	}
	var out bytes.Buffer
	out.Write(b[:i+len(markStart)])
	out.WriteString("\n")
	out.Write(table)
	out.Write(b[j:])
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), fi.Mode().Perm())
}
