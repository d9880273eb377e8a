package wire

import (
	"strings"
	"testing"
)

// SEC-14: a client-chosen value is escaped and bounded in a log line.
func TestSEC14LogSafe(t *testing.T) {
	cases := map[string]string{
		"/mcp":                   "/mcp",
		"a\r\nb":                 `a\r\nb`,
		"\x1b[31mred":            `\x1b[31mred`,
		"rtl\u202eevil":          `rtl\u202eevil`,
		"bad\xffutf8":            `bad\xffutf8`,
		strings.Repeat("x", 300): strings.Repeat("x", 256) + "...",
	}
	for in, want := range cases {
		if got := LogSafe(in); got != want {
			t.Errorf("LogSafe(%q): got %q, want %q", in, got, want)
		}
	}
}
