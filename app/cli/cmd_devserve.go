package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/internal/netaddr"
)

type devServeOptions struct {
	dir  string
	addr string
}

// newDevServeCmd builds `routinely dev-serve`: flags and help; the work is runDevServe's.
func newDevServeCmd(e *env) *cobra.Command {
	o := devServeOptions{addr: "127.0.0.1:8765"}
	cmd := &cobra.Command{
		Use:   "dev-serve DIR",
		Short: "Serve DIR over HTTP on localhost, to try page watches offline",
		Long: `Serve the files of DIR at http://127.0.0.1:8765/ until Ctrl-C. The example routines
watch a page served this way ('make run' and 'make daemon' start it), so you can edit the page
and see a change notification without a network. Only for trying things out: it listens on
loopback by default and serves plain files inside DIR only: no symbolic link out of it, no file
or directory whose name starts with a dot, no directory listing (a directory's index.html is
served). It warns when --addr lets other machines in.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir = args[0]
			return runDevServe(cmd.Context(), e, o)
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", o.addr, "address to listen on")
	return cmd
}

// runDevServe serves o.dir until ctx ends. Errors: DIR missing (1), address in use (1).
func runDevServe(ctx context.Context, e *env, o devServeOptions) error {
	root, err := os.OpenRoot(o.dir)
	if err != nil {
		return fmt.Errorf("dev-serve: %s is not a directory: %w", o.dir, err)
	}
	defer func() { _ = root.Close() }()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("dev-serve: %w", err)
	}
	if host, _, _ := net.SplitHostPort(o.addr); !netaddr.Loopback(host) {
		fmt.Fprintf(e.stderr, "Warning: dev-serve listens on %s, so other machines can read the files of %s. It is meant for trying page watches on this machine: use --addr 127.0.0.1:8765 unless you mean to share them.\n", ln.Addr(), o.dir)
	}
	srv := &http.Server{Handler: rootHandler{root}, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stderr, "Serving %s at http://%s/ (Ctrl-C to stop)\n", o.dir, ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("dev-serve: %w", err)
	}
	return nil
}

// open opens rel in h's root and returns it with what it is. It opens without blocking, and
// judges the file it opened (not a stat before the open, which a FIFO swapped in between would
// turn into a request that hangs). Errors: the open's or the stat's, with nothing left open.
func (h rootHandler) open(rel string) (*os.File, os.FileInfo, error) {
	f, err := h.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// rootHandler serves the regular files of root for GET and HEAD: os.Root refuses any path, or
// symbolic link, that leads out of the directory; a name starting with a dot anywhere in the
// path is not found (.git, .env); a directory serves its index.html and is otherwise not found
// (no listing).
type rootHandler struct{ root *os.Root }

func (h rootHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := path.Clean("/" + r.URL.Path)
	if hiddenPath(name) {
		http.NotFound(w, r)
		return
	}
	rel := strings.TrimPrefix(name, "/")
	if rel == "" {
		rel = "."
	}
	f, fi, err := h.open(rel)
	if err == nil && fi.IsDir() {
		_ = f.Close()
		if !strings.HasSuffix(r.URL.Path, "/") {
			// Relative links in the index resolve against the directory only with the slash.
			http.Redirect(w, r, name+"/", http.StatusMovedPermanently) // name: never "//host"
			return
		}
		rel = path.Join(rel, "index.html")
		f, fi, err = h.open(rel)
	}
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer func() { _ = f.Close() }()
	if !fi.Mode().IsRegular() { // no listing, no device
		http.NotFound(w, r)
		return
	}
	http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
}

// hiddenPath reports whether a path element of the cleaned URL path name starts with a dot.
func hiddenPath(name string) bool {
	for el := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(el, ".") {
			return true
		}
	}
	return false
}
