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
// user name kept, as url.URL.Redacted does), and raw itself when it has none. Two kinds lose
// their whole user info instead (everything between "//" and the last "@", shown "xxxxx"):
//   - a nats:// or tls:// URL with a user and no password, since NATS reads that user as the
//     token (https://docs.nats.io/using-nats/developer/connecting/token);
//   - a raw that does not parse as a URL, or one with an "@" the parser did not take as user
//     info while a ":" comes before it — a password with an unescaped '#', '/' or '?'
//     (`http://admin:12#34@host/` parses as host "admin", port 12) — so a mistyped URL's
//     password shows neither in the error about it nor in the request's.
//
// An "@" in a path without a ":" before it (`https://mastodon.social/@user`) is kept, except in
// a nats:// or tls:// URL, which has no path.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && !strayAt(raw, u) {
		if u.User == nil {
			return raw
		}
		if _, has := u.User.Password(); has {
			return u.Redacted()
		}
		if !tokenScheme(u.Scheme) {
			return raw // a user name; kept as written (Redacted would re-encode it)
		}
	}
	scheme, rest, ok := strings.Cut(raw, "//")
	if !ok {
		return raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	if err == nil && u.User == nil && !strings.Contains(rest[:at], ":") && !tokenScheme(u.Scheme) {
		return raw
	}
	return scheme + "//xxxxx" + rest[at:]
}

// strayAt reports whether raw has an "@" after its "//" that u (raw parsed) did not take as the
// end of its user info: one in the path, query or fragment.
func strayAt(raw string, u *url.URL) bool {
	_, rest, ok := strings.Cut(raw, "//")
	if !ok {
		return false
	}
	n := strings.Count(rest, "@")
	if u.User != nil {
		n-- // the one that ends the user info (a literal '@' in it is escaped)
	}
	return n > 0
}

// tokenScheme reports whether a URL of scheme is a NATS server's, whose user info may be a token.
func tokenScheme(scheme string) bool { return scheme == "nats" || scheme == "tls" }
