package redact

import "testing"

func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://admin:s3cretPW@127.0.0.1:8080/ping?x=1", "http://admin:xxxxx@127.0.0.1:8080/ping?x=1"},
		{"https://u:p%40ss@host/", "https://u:xxxxx@host/"},
		{"nats://dev:tok@hub.lan:4222", "nats://dev:xxxxx@hub.lan:4222"},
		{"https://token@host/path", "https://token@host/path"}, // a user without a password is a user name
		{"https://hc-ping.com/uuid", "https://hc-ping.com/uuid"},
		{"https://host/a b?q=%zz", "https://host/a b?q=%zz"},          // no user info: unchanged, not re-encoded
		{"http://admin:s3cretPW@host:bad/", "http://xxxxx@host:bad/"}, // does not parse
		{"http://admin:s3cretPW@[::1/x", "http://xxxxx@[::1/x"},
		{"not a url", "not a url"},
		// A password with an unescaped '#', '/' or '?': the parser takes the '#' for the
		// fragment's start (or fails), and the password would show.
		{"http://admin:s3cr#et@127.0.0.1:9/", "http://xxxxx@127.0.0.1:9/"},
		{"http://admin:1234#5@127.0.0.1:9/", "http://xxxxx@127.0.0.1:9/"},
		{"http://admin:pa/ss@host/x", "http://xxxxx@host/x"},
		{"nats://admin:Pa55#word@hub.lan:4222", "nats://xxxxx@hub.lan:4222"},
		// NATS reads a user without a password as the token.
		{"nats://S3cretToken@127.0.0.1:4222", "nats://xxxxx@127.0.0.1:4222"},
		{"tls://S3cretToken@hub.lan:4222", "tls://xxxxx@hub.lan:4222"},
		{"nats://S3cret#Token@hub.lan:4222", "nats://xxxxx@hub.lan:4222"},
		// An '@' in a path with no ':' before it is no user info.
		{"https://mastodon.social/@user", "https://mastodon.social/@user"},
		{"", ""},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
