package action

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/http/httpguts"

	"github.com/routinely/routinely/internal/redact"
)

// Validation of the action tables of routines.toml. Every finding is a FieldError whose Key is
// the TOML key under the action ("url", "selector", "headers.X-Token", "ignore", ...), or "" for
// the action key itself, so the config parser can point at routines.toml:LINE:COL. Anything a
// run would trip over later (a bad URL, an uncompilable regex or selector, a header that would
// smuggle a newline) is caught here, never at run time.

// Methods each HTTP action accepts (upper case; specs may spell them in any case). Watch needs a
// response body to read, so it has no HEAD.
var (
	watchMethods = []string{"GET", "POST"}
	pingMethods  = []string{"GET", "HEAD", "POST", "PUT"}
)

// notifyOnKinds are the values `notify_on` accepts.
var notifyOnKinds = []string{NotifyOnSuccess, NotifyOnFailure, NotifyOnChange}

// Validate checks `run = [argv]`: at least one element, a non-empty program, no NUL bytes
// (the OS cannot pass them). Returns nil when valid.
func (s RunSpec) Validate() []FieldError {
	if len(s.Argv) == 0 {
		return []FieldError{{Key: "", Message: "run needs at least the program to execute"}}
	}
	var errs []FieldError
	if strings.TrimSpace(s.Argv[0]) == "" {
		errs = append(errs, FieldError{Key: "", Message: "run: the program (first element) is empty"})
	}
	for i, a := range s.Argv {
		if strings.ContainsRune(a, 0) {
			errs = append(errs, FieldError{Key: "", Message: fmt.Sprintf("run: element %d contains a NUL byte", i)})
		}
	}
	return errs
}

// Validate checks `shell = "..."`: a non-blank script without NUL bytes. Returns nil when valid.
func (s ShellSpec) Validate() []FieldError {
	switch {
	case strings.TrimSpace(s.Script) == "":
		return []FieldError{{Key: "", Message: "shell script is empty"}}
	case strings.ContainsRune(s.Script, 0):
		return []FieldError{{Key: "", Message: "shell script contains a NUL byte"}}
	}
	return nil
}

// Validate checks `watch = {...}`: an absolute http/https URL with a host; a selector that is
// not blank when present (SelectorSet) and that compiles as CSS; every `ignore` entry compiles
// as a Go regular expression (RE2 syntax); method GET or POST; header names are HTTP tokens and
// values carry no control characters such as newlines. Returns nil when valid.
func (s WatchSpec) Validate() []FieldError {
	var errs []FieldError
	errs = append(errs, validateURL("url", s.URL)...)
	if (s.SelectorSet || s.Selector != "") && strings.TrimSpace(s.Selector) == "" {
		errs = append(errs, FieldError{Key: "selector", Message: "selector is empty (leave the key out to watch the whole page)"})
	} else if s.Selector != "" {
		if _, err := cascadia.Compile(s.Selector); err != nil {
			errs = append(errs, FieldError{Key: "selector", Message: fmt.Sprintf("selector %q is not valid CSS: %v", s.Selector, err)})
		}
	}
	for i, pat := range s.Ignore {
		if _, err := regexp.Compile(pat); err != nil {
			errs = append(errs, FieldError{Key: "ignore", Message: fmt.Sprintf("ignore[%d] %q is not a valid regular expression: %v", i, pat, err)})
		}
	}
	errs = append(errs, validateMethod("method", s.Method, watchMethods)...)
	errs = append(errs, validateHeaders("headers", s.Headers)...)
	return errs
}

// Validate checks `notify = { title, body }`: the title is not blank. Returns nil when valid.
func (s NotifySpec) Validate() []FieldError {
	if strings.TrimSpace(s.Title) == "" {
		return []FieldError{{Key: "title", Message: "notification title is empty"}}
	}
	return nil
}

// Validate checks `ping = { url, method }`: an absolute http/https URL with a host and a method
// among GET, HEAD, POST, PUT (any case; empty means GET). Returns nil when valid.
func (s PingSpec) Validate() []FieldError {
	errs := validateURL("url", s.URL)
	return append(errs, validateMethod("method", s.Method, pingMethods)...)
}

// ValidateNotifyOn checks a routine's `notify_on` list: each entry is "success", "failure" or
// "change", without repeats. Key is "notify_on". Returns nil when valid.
func ValidateNotifyOn(kinds []string) []FieldError {
	var errs []FieldError
	seen := map[string]bool{}
	for _, k := range kinds {
		if !slices.Contains(notifyOnKinds, k) {
			errs = append(errs, FieldError{Key: "notify_on", Message: fmt.Sprintf("notify_on: %q is not one of %s", k, strings.Join(notifyOnKinds, ", "))})
		} else if seen[k] {
			errs = append(errs, FieldError{Key: "notify_on", Message: fmt.Sprintf("notify_on: %q is listed twice", k)})
		}
		seen[k] = true
	}
	return errs
}

// ValidateRetries checks a routine's `retries` value: 0..MaxRetries. Key is "retries".
func ValidateRetries(n int) []FieldError {
	if n < 0 || n > MaxRetries {
		return []FieldError{{Key: "retries", Message: fmt.Sprintf("retries must be between 0 and %d, not %d", MaxRetries, n)}}
	}
	return nil
}

func validateURL(key, raw string) []FieldError {
	if strings.TrimSpace(raw) == "" {
		return []FieldError{{Key: key, Message: "url is empty"}}
	}
	shown := redact.URL(raw) // problems are shown in status, the log and the window
	u, err := url.Parse(raw)
	if err != nil {
		return []FieldError{{Key: key, Message: fmt.Sprintf("url %q does not parse: %v", shown, urlParseError(err, raw))}}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return []FieldError{{Key: key, Message: fmt.Sprintf("url %q must start with http:// or https://", shown)}}
	}
	if u.Host == "" {
		return []FieldError{{Key: key, Message: fmt.Sprintf("url %q has no host", shown)}}
	}
	if u.User == nil && shown != raw {
		// redact.URL saw user info the parser did not: "http://admin:12#34@host/" would go to
		// a host named "admin", with the rest as its fragment.
		return []FieldError{{Key: key, Message: fmt.Sprintf("url %q has an '@' after a '#', '/' or '?': a password with those characters is written %%23, %%2F, %%3F", shown)}}
	}
	return nil
}

func validateMethod(key, method string, allowed []string) []FieldError {
	if method == "" || slices.Contains(allowed, strings.ToUpper(method)) {
		return nil
	}
	return []FieldError{{Key: key, Message: fmt.Sprintf("method %q is not one of %s", method, strings.Join(allowed, ", "))}}
}

func validateHeaders(key string, headers map[string]string) []FieldError {
	var errs []FieldError
	for _, name := range slices.Sorted(maps.Keys(headers)) { // stable order for messages and tests
		k := key + "." + name
		if !httpguts.ValidHeaderFieldName(name) {
			errs = append(errs, FieldError{Key: k, Message: fmt.Sprintf("header name %q is not a valid HTTP token", name)})
		}
		if !httpguts.ValidHeaderFieldValue(headers[name]) { // rejects CR, LF and other controls but tab
			errs = append(errs, FieldError{Key: k, Message: fmt.Sprintf("header %q value contains a newline or control character", name)})
		}
	}
	return errs
}
