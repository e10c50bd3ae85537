package locale

import (
	"os"
	"testing"
)

func TestEnsure(t *testing.T) {
	for _, c := range []struct{ lang, language, want string }{
		{"C.UTF-8", "", "en"},
		{"POSIX", "", "en"},
		{"", "", "en"},
		{"de_DE.UTF-8", "", ""},
		{"C", "fr", "fr"},
	} {
		t.Setenv("LC_ALL", "")
		t.Setenv("LC_MESSAGES", "")
		t.Setenv("LANG", c.lang)
		t.Setenv("LANGUAGE", c.language)
		if c.language == "" {
			os.Unsetenv("LANGUAGE")
		}
		Ensure()
		if got := os.Getenv("LANGUAGE"); got != c.want {
			t.Errorf("LANG=%q LANGUAGE=%q: LANGUAGE became %q, want %q", c.lang, c.language, got, c.want)
		}
	}
}
