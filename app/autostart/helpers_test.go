package autostart

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeBinary writes an executable file at dir/name and returns its path.
func fakeBinary(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustStatus(t *testing.T, st Status, err error, want State, pointsHere bool) Status {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if st.State != want || st.PointsHere != pointsHere {
		t.Fatalf("status = %+v, want state %s, points_here %v", st, want, pointsHere)
	}
	return st
}

// bg is the arguments of an entry for the default profile.
var bg = []string{BackgroundFlag}
