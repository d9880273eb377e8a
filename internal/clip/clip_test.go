package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"fits", "abc", 3, "abc"},
		{"ascii", "abcdef", 4, "abcd"},
		{"backs off to a rune start", "aéb", 2, "a"},
		{"zero", "é", 0, ""},
	} {
		if got := Prefix(tc.in, tc.n); got != tc.want {
			t.Errorf("%s: Prefix(%q, %d): got %q, want %q", tc.name, tc.in, tc.n, got, tc.want)
		}
	}
}

func TestEllipsis(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"fits", "abc", 3, "abc"},
		{"cut and marked", "abcdefgh", 6, "abc…"},
		{"backs off to a rune start", "ééééé", 7, "éé…"},
		{"bound below the mark", "abcdef", 2, "…"},
	} {
		got := Ellipsis(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("%s: Ellipsis(%q, %d): got %q, want %q", tc.name, tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: Ellipsis(%q, %d) = %q is not valid UTF-8", tc.name, tc.in, tc.n, got)
		}
	}
	long := strings.Repeat("wörd ", 100)
	for n := len(Mark); n < len(long); n++ {
		if got := Ellipsis(long, n); len(got) > n || !utf8.ValidString(got) {
			t.Fatalf("Ellipsis(long, %d): got %d bytes (valid %v), want at most %d valid", n, len(got), utf8.ValidString(got), n)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got, want := OneLine("  a\n\tb   c \r\n"), "a b c"; got != want {
		t.Errorf("OneLine: got %q, want %q", got, want)
	}
}
