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
