package printable

import "testing"

func TestHumanViewEncodingLine(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"plain":        {"add two numbers", "add two numbers"},
		"unicode":      {"añadir · 数字", "añadir · 数字"},
		"ansi":         {"ok\x1b[2Jgone", `ok\x1b[2Jgone`},
		"newline":      {"line one\nline two\r", `line one\nline two\r`},
		"tab and del":  {"a\tb\x7f", `a\tb\x7f`},
		"c1 control":   {"a\u009bb", `a\x9bb`},
		"bidi":         {"file\u202etxt.exe", `file\u202etxt.exe`},
		"separator":    {"a\u2028b", `a\u2028b`},
		"invalid utf8": {"a\xffb", `a\xffb`},
		"backslash":    {`C:\path`, `C:\path`},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("%s: Line(%q) = %q, want %q", name, tc.in, got, tc.want)
		}
	}
	if got, want := Lines("one\x1b[31m\ntwo"), "one\\x1b[31m\ntwo"; got != want {
		t.Errorf("Lines: %q, want %q", got, want)
	}
}
