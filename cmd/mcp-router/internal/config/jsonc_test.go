package config

import "testing"

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
