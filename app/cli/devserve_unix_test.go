//go:build !windows

package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// dev-serve judges the file it opened, and opens without blocking: a FIFO at a served path (or
// swapped in after a check) is not found at once, where an open for reading would wait for a
// writer and hang the request.
func TestDevServeAFIFOIsNotFoundAtOnce(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "page.html"), []byte("<p>hi</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	h := rootHandler{root: root}
	for path, want := range map[string]int{"/pipe": http.StatusNotFound, "/page.html": http.StatusOK} {
		done := make(chan int, 1)
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			done <- rec.Code
		}()
		select {
		case code := <-done:
			if code != want {
				t.Errorf("GET %s: %d, want %d", path, code, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("GET %s: no answer in 5 s (the open blocks on the FIFO)", path)
		}
	}
}
