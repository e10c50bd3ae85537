package config

import (
	"strings"
	"testing"
)

// A problem about a URL names it without its password: problems are shown in status, the log
// and the window.
func TestURLProblemsHideThePassword(t *testing.T) {
	cfg, err := Parse("routines.toml", []byte(`
[hub]
url = "http://dev:s3cretPW@hub.lan:4222"
token = "t"

[[routine]]
name = "alive"
every = "5m"
ping = { url = "ftp://admin:s3cretPW@monitor.lan/" }
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Problems) < 2 {
		t.Fatalf("problems %v: want the hub's and the ping's", cfg.Problems)
	}
	for _, p := range cfg.Problems {
		if strings.Contains(p.Message, "s3cretPW") || !strings.Contains(p.Message, ":xxxxx@") {
			t.Errorf("problem %q: want the URL without its password", p.Message)
		}
	}
}

// A password or token with an unescaped '#' would make the rest of a hub URL a fragment (and
// the connection go to a host named after the user): such a url is a problem at its line:col,
// which shows neither the password nor the token.
func TestHubURLWithAnUnescapedHashIsAProblem(t *testing.T) {
	for _, u := range []string{"nats://admin:Pa55#word@hub.lan:4222", "nats://S3cret#Token@hub.lan:4222"} {
		cfg, err := Parse("routines.toml", []byte("[hub]\nurl = \""+u+"\"\ntoken = \"t\"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if !cfg.HubInvalid || len(cfg.Problems) != 1 {
			t.Fatalf("url %q: problems %v, hub invalid %v; want one problem, hub invalid", u, cfg.Problems, cfg.HubInvalid)
		}
		p := cfg.Problems[0]
		if p.Line != 2 || !strings.Contains(p.Message, "%23") || strings.Contains(p.Message, "Pa55") || strings.Contains(p.Message, "S3cret") {
			t.Errorf("url %q: problem %s:%d %q; want line 2, the %%23 hint, no secret", u, p.File, p.Line, p.Message)
		}
	}
}
