//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUpdateReadmeReplacesOnlyTheSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	before := "# R\n\n## Performance\n" + markStart + "\nold table\n" + markEnd + "\n\n## Next\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := UpdateReadme(path, []byte("| new |\n")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "# R\n\n## Performance\n" + markStart + "\n| new |\n" + markEnd + "\n\n## Next\n"
	if string(b) != want {
		t.Fatalf("got %q\nwant %q", b, want)
	}
	if err := os.WriteFile(path, []byte("no markers"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := UpdateReadme(path, []byte("x")); err == nil || !strings.Contains(err.Error(), markStart) {
		t.Fatalf("missing markers not reported: %v", err)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{5, 1, 4, 2, 3})
	if s.Median != 3 || s.P99 != 5 || s.Mean != 3 || s.N != 5 {
		t.Fatalf("%+v", s)
	}
	if s := Summarize([]float64{1, 2, 3, 4}); s.Median != 2.5 {
		t.Fatalf("even median %+v", s)
	}
}

func TestMissedGoalIsMarked(t *testing.T) {
	var b strings.Builder
	Render(&b, []Figure{
		{Name: "fast", Unit: "ms", Value: Stat{N: 3, Median: 1, P99: 2}, Goal: "p99 ≤ 5 ms", Met: func(f Figure) bool { return f.Value.P99 <= 5 }},
		{Name: "slow", Unit: "ms", Value: Stat{N: 3, Median: 9, P99: 20}, Goal: "p99 ≤ 5 ms", Met: func(f Figure) bool { return f.Value.P99 <= 5 }},
	}, false)
	out := b.String()
	if !strings.Contains(out, "| fast |") || !strings.Contains(out, "| slow |") || strings.Count(out, "missed") != 1 {
		t.Fatalf("table:\n%s", out)
	}
}
