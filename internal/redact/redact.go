// Package redact keeps the passwords in URLs from routines.toml (`ping`, `watch`, `[hub] url`:
// `https://admin:secret@host/…`) out of everything Routinely shows or keeps: log lines, a run's
// summary and output in the journal, `history`, `status`, notifications and the window
// (docs/design.md#10-text-from-outside).
package redact

import (
	"net/url"
	"strings"
)

// URL returns raw as it may be shown: the password of its user info replaced by "xxxxx" (the
// user name kept, as url.URL.Redacted does), and raw itself when it has none. A raw that does not
// parse as a URL loses its whole user info instead (everything between "//" and the last "@" of
// its authority), so a mistyped URL's password does not show in the error about it either.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err == nil {
		if _, has := u.User.Password(); !has {
			return raw // keep it as written: Redacted would re-encode it
		}
		return u.Redacted()
	}
	scheme, rest, ok := strings.Cut(raw, "//")
	if !ok {
		return raw
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return raw
	}
	return scheme + "//xxxxx" + rest[at:]
}
