package approval

import (
	"strings"
	"testing"
)

// SEC-22: the person's question holds no secret the model put in the
// arguments, wherever it sits: under a credential's name however deep, in
// a URL's password or query, after Bearer in a command line, or shaped
// like a key.
func TestSummaryRedactsSecretsEverywhere(t *testing.T) {
	for name, tc := range map[string]struct {
		args   map[string]any
		secret string
	}{
		"nested header":  {map[string]any{"req": map[string]any{"headers": map[string]any{"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz012345"}}}, "abcdefghijklmnop"},
		"URL password":   {map[string]any{"url": "https://me:s3cretPassw0rd@host.example/x"}, "s3cretPassw0rd"},
		"URL query":      {map[string]any{"url": "see https://api.example/v1?x=1&access_token=abcdef1234567890abcdef"}, "abcdef1234567890"},
		"Bearer in text": {map[string]any{"cmd": "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345' https://x"}, "abcdefghijklmnop"},
		"base64 blob":    {map[string]any{"blob": "c2VjcmV0OnN1cGVyc2VjcmV0cGFzc3dvcmQxMjM0NTY3ODkw"}, "c2VjcmV0"},
		"in a list":      {map[string]any{"keys": []any{"AKIAIOSFODNN7EXAMPLE"}}, "AKIAIOSFODNN7"},
	} {
		if got := Summary(tc.args); strings.Contains(got, tc.secret) {
			t.Errorf("%s: summary %s shows %q", name, got, tc.secret)
		}
	}
	if got := Summary(map[string]any{"url": "https://example.com/search?q=weather&page=2"}); !strings.Contains(got, "q=weather&page=2") {
		t.Errorf("a URL without secrets reads %s, want it whole", got)
	}
	if got := Summary(map[string]any{"cmd": "basic setup, then rm basic /home/me/projects"}); !strings.Contains(got, "basic /home/me/projects") {
		t.Errorf("text that only looks like a credential's start reads %s, want it whole", got)
	}
}

// SEC-08: characters the person cannot see, or that reverse the text
// after them, are shown as escapes: the model cannot make a path read as
// another one in the question.
func TestSummaryShowsHiddenCharacters(t *testing.T) {
	got := Summary(map[string]any{"path": "/home/me/\u202etxt.exe", "cmd": "rm\u200b -rf", "tag": "a\U000E0041"})
	if strings.ContainsAny(got, "\u202e\u200b\U000E0041") {
		t.Errorf("summary %q holds an invisible or bidi character", got)
	}
	for _, want := range []string{`\u202e`, `\u200b`, `\udb40\udc41`} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %s does not show %s", got, want)
		}
	}
}

// A long value cannot push the arguments after it out of the person's
// sight: each string is cut, saying its size, and every key shows.
func TestSummaryShowsEveryKey(t *testing.T) {
	got := Summary(map[string]any{"a_note": strings.Repeat("harmless ", 200), "path": "/"})
	if !strings.Contains(got, `"path":"/"`) {
		t.Errorf("summary %s hides the path behind a long note", got)
	}
	if !strings.Contains(got, "(1800 bytes in all)") {
		t.Errorf("summary %s does not say how long the cut note was", got)
	}
}

// Nor can many long values: a list of them, or an object of them, is cut
// shorter until the keys after it show, and stood in for by its size when
// even that does not fit.
func TestSummaryShowsEveryKeyPastManyLongValues(t *testing.T) {
	pad := strings.Repeat("harmless ", 30)
	many := make([]any, 50)
	for i := range many {
		many[i] = pad
	}
	for name, args := range map[string]map[string]any{
		"a list of long values":  {"args": []any{pad, pad, pad, pad, pad, pad, "-rf", "/"}, "command": "rm"},
		"a long list":            {"args": append(many, "-rf", "/"), "command": "rm"},
		"an object of long ones": {"a": map[string]any{"b": pad, "c": pad, "d": pad, "e": pad, "f": pad, "g": pad}, "command": "rm"},
	} {
		got := Summary(args)
		if !strings.Contains(got, `"command":"rm"`) {
			t.Errorf("%s: summary %s hides the command behind the values before it", name, got)
		}
		if len(got) > MaxSummaryBytes+len("…") {
			t.Errorf("%s: summary of %d bytes, want at most %d", name, len(got), MaxSummaryBytes)
		}
	}
	if got := Summary(map[string]any{"args": []any{pad, pad, pad, pad, pad, pad, "-rf", "/"}, "command": "rm"}); !strings.Contains(got, `"-rf","/"`) {
		t.Errorf("summary %s hides the short values of a list that fits once its long ones are cut", got)
	}
}

// Nor can a long key, which is cut as a value is; two keys that read the
// same once cut both show.
func TestSummaryShowsEveryKeyPastLongKeys(t *testing.T) {
	long := strings.Repeat("a", 700)
	got := Summary(map[string]any{long: "x", "command": "rm"})
	if !strings.Contains(got, `"command":"rm"`) {
		t.Errorf("summary %s hides the command behind a long key", got)
	}
	got = Summary(map[string]any{long + "1": "safe", long + "2": "rm -rf /"})
	if !strings.Contains(got, "safe") || !strings.Contains(got, "rm -rf /") {
		t.Errorf("summary %s hides one of two long keys that share their start", got)
	}
}
