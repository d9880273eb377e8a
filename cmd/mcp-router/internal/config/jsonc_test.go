package config

import (
	"encoding/json"
	"testing"
)

func TestJSONC(t *testing.T) {
	in := `{
  // a comment with "quotes" and a , before }
  "a": "http://x/y", /* block */ "b": [1, 2,],
  "c": "// not a comment, \" still a string",
}`
	out, comments := JSONC([]byte(in))
	want := "{\n  \n  \"a\": \"http://x/y\",  \"b\": [1, 2],\n  \"c\": \"// not a comment, \\\" still a string\"\n}"
	if string(out) != want || !comments {
		t.Errorf("JSONC:\n got %q\nwant %q (comments %v)", out, want, comments)
	}
	if out, comments := JSONC([]byte(`{"a": 1}`)); string(out) != `{"a": 1}` || comments {
		t.Errorf("plain JSON changed: %q %v", out, comments)
	}
}

// FuzzJSONC: plain JSON passes through unchanged, and nothing panics.
func FuzzJSONC(f *testing.F) {
	f.Add([]byte(`{"a": "//x", "b": [1, 2], "c": {"d": "/*"}}`))
	f.Add([]byte("{\n // c\n \"a\": 1, /* b */\n}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, comments := JSONC(data)
		if json.Valid(data) && (string(out) != string(data) || comments) {
			t.Errorf("JSONC changed valid JSON %q to %q (comments %v)", data, out, comments)
		}
	})
}
