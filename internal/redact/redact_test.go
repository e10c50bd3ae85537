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
		{"", ""},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
