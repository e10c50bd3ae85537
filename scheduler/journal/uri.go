package journal

// How a journal's path reaches SQLite, and the check that SQLite opened that file.
//
// modernc.org/sqlite passes a name that starts with "file:" to sqlite3_open_v2 whole, with
// SQLITE_OPEN_URI, and reads its own parameters from the text after the name's first '?'
// (newConn in its conn.go). SQLite ends a URI's path at the first '?' or '#' and decodes %HH
// escapes in it (https://sqlite.org/uri.html). So "file:"+path with a '?', '#' or '%' in path
// opens another file: "/home/v/work#routines/journal.db" opened "/home/v/work". The path is
// therefore percent-escaped as a file URL's path (net/url), and after opening the file SQLite
// names is compared with the expected one.

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// URI returns the SQLite URI that opens the file at path with the driver and SQLite parameters
// params (nil: none): "file:///…?…", with every character of path that a URI would read as
// something else ('?', '#', '%', spaces, non-ASCII bytes) percent-escaped, so the file opened is
// path whatever its characters. A relative path is made absolute first (a URI's path is
// absolute; "file:rel" would name a host). On Windows the drive letter follows a '/'
// ("file:///C:/…"), as SQLite documents. It is the one place a journal's URI is built; tests
// and tools that open a journal themselves use it too. Errors: filepath.Abs's.
func URI(path string, params url.Values) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("journal %s: %w", path, err)
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/… on Windows
	}
	u := url.URL{Scheme: "file", Path: p}
	if params != nil {
		u.RawQuery = params.Encode()
	}
	return u.String(), nil
}

// openDB opens the database at path through database/sql with params (URI), and checks that
// the file SQLite opened is the one at path (opened). It returns the handle and what path was
// when checked (os.SameFile tells a later replacement: Journal.Intact). Errors: URI's; the
// open's or the check's (wrapping ErrOpenedElsewhere), with the handle closed.
func openDB(path string, params url.Values) (*sql.DB, os.FileInfo, error) {
	uri, err := URI(path, params)
	if err != nil {
		return nil, nil, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, nil, fmt.Errorf("journal %s: %w", path, err)
	}
	fi, err := opened(db, path)
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return db, fi, nil
}

// opened checks that db, opened for path, reads the file at path: SQLite's own name for its
// main database (PRAGMA database_list, the name after URI decoding) must be the same file
// (os.SameFile: device and inode on Unix, volume and file index on Windows) as a stat of path.
// It returns path's FileInfo. Errors: one wrapping ErrOpenedElsewhere that names both files;
// a stat error or SQLite's (classifyOpenError), wrapped.
func opened(db *sql.DB, path string) (os.FileInfo, error) {
	rows, err := db.Query(`PRAGMA database_list`)
	if err != nil {
		return nil, classifyOpenError(path, err)
	}
	defer func() { _ = rows.Close() }()
	file := ""
	for rows.Next() {
		var seq int
		var name, f string
		if err := rows.Scan(&seq, &name, &f); err != nil {
			return nil, classifyOpenError(path, err)
		}
		if name == "main" {
			file = f
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classifyOpenError(path, err)
	}
	want, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if file == "" {
		return nil, fmt.Errorf("journal %s: %w: SQLite opened no file", path, ErrOpenedElsewhere)
	}
	got, err := os.Stat(file)
	if err != nil || !os.SameFile(got, want) {
		return nil, fmt.Errorf("journal %s: %w: SQLite opened %q instead. Nothing was written to the journal; report this as a bug",
			path, ErrOpenedElsewhere, file)
	}
	return want, nil
}
