package action

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A URL's password is never in what an attempt reports, even when the URL does not parse (the
// parser's error quotes it) or fails validation.
func TestURLPasswordNotInErrors(t *testing.T) {
	const bad = "http://admin:s3cretPW@host:bad/"
	_, err := send(context.Background(), http.DefaultClient, "GET", bad, "test", nil)
	if err == nil || strings.Contains(err.Error(), "s3cretPW") || !strings.Contains(err.Error(), "xxxxx@host:bad") {
		t.Errorf("send(%q) = %v: want an error naming the URL without its password", bad, err)
	}
	for _, spec := range []interface{ Validate() []FieldError }{
		PingSpec{URL: bad}, PingSpec{URL: "ftp://admin:s3cretPW@host/"}, WatchSpec{URL: "http://admin:s3cretPW@/x"},
		// An unescaped '#' in the password: it parses, as host "admin" and a fragment.
		PingSpec{URL: "http://admin:1234#s3cretPW@127.0.0.1:9/"}, WatchSpec{URL: "http://admin:s3cretPW#1@127.0.0.1:9/"},
	} {
		errs := spec.Validate()
		if len(errs) == 0 {
			t.Errorf("%+v validated", spec)
		}
		for _, e := range errs {
			if strings.Contains(e.Message, "s3cretPW") {
				t.Errorf("%+v: problem %q shows the password", spec, e.Message)
			}
		}
	}
}
