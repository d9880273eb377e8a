package executor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseText(t *testing.T) {
	r := func(step string, path ...string) part {
		return part{ref: &ref{step: step, path: path}}
	}
	lit := func(s string) part { return part{text: s} }
	tests := []struct {
		name string
		in   string
		want []part
		err  string
	}{
		{name: "plain text", in: "hello", want: []part{lit("hello")}},
		{name: "empty", in: "", want: nil},
		{name: "whole reference", in: "$<<a>>", want: []part{r("a")}},
		{name: "dotted path with index", in: "$<<search.items.0.place_id>>", want: []part{r("search", "items", "0", "place_id")}},
		{name: "interpolated", in: "id=$<<a.id>>!", want: []part{lit("id="), r("a", "id"), lit("!")}},
		{name: "two references", in: "$<<a>>$<<b>>", want: []part{r("a"), r("b")}},
		{name: "s11 is not s1", in: "$<<s11>>", want: []part{r("s11")}},
		{name: "dollar number is literal", in: "costs $5", want: []part{lit("costs $5")}},
		{name: "hash E1 is literal", in: "#E1 and $E1", want: []part{lit("#E1 and $E1")}},
		{name: "lone $< is literal", in: "a $< b", want: []part{lit("a $< b")}},
		{name: "unclosed $<< is literal", in: "x $<<a and more", want: []part{lit("x $<<a and more")}},
		{name: "escape is a literal $<<", in: "$$<<a>>", want: []part{lit("$<<a>>")}},
		{name: "escape then reference", in: "$$<<a>> $<<b>>", want: []part{lit("$<<a>> "), r("b")}},
		{name: "trailing dollar", in: "a$", want: []part{lit("a$")}},
		{name: "bad id", in: "$<<1a>>", err: `"$<<1a>>" is not a reference`},
		{name: "spaces are not an id", in: "use $<< and >> here", err: "is not a step id"},
		{name: "empty segment", in: "$<<a..b>>", err: "empty path segment"},
		{name: "the seeds' syntax is refused", in: "${{sin_result}}", err: `"${{sin_result}}" is not this gateway's reference syntax: write "$<<sin_result>>"`},
		{name: "the seeds' syntax with a path, inside text", in: "x=${{a.result}}!", err: `write "$<<a.result>>" for the value of step "a"`},
		{name: "escaped seeds' syntax is literal", in: "$${{a}}", want: []part{lit("${{a}}")}},
		{name: "a spaced GitHub expression is literal", in: "sha: ${{ github.sha }}", want: []part{lit("sha: ${{ github.sha }}")}},
		{name: "an unclosed ${{ is literal", in: "${{a", want: []part{lit("${{a")}},
		{name: "bracket index is not the syntax", in: "$<<a.items[0]>>", want: []part{r("a", "items[0]")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseText(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range got {
				if p.ref != nil {
					p.ref.src = ""
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(part{}, ref{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefObject(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]any
		isRef   bool
		path    []string
		wantErr bool
	}{
		{name: "bare", in: map[string]any{"$ref": "a"}, isRef: true},
		{name: "pointer", in: map[string]any{"$ref": "a", "path": "/items/0/a~1b~0c"}, isRef: true, path: []string{"items", "0", "a/b~c"}},
		{name: "JSON Schema ref stays literal", in: map[string]any{"$ref": "#/$defs/x"}},
		{name: "extra keys stay literal", in: map[string]any{"$ref": "a", "type": "object"}},
		{name: "bad pointer", in: map[string]any{"$ref": "a", "path": "items"}, isRef: true, wantErr: true},
		{name: "bad escape", in: map[string]any{"$ref": "a", "path": "/a~2"}, isRef: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok, err := refObject(tt.in)
			if ok != tt.isRef || (err != nil) != tt.wantErr {
				t.Fatalf("got ok=%v err=%v, want ok=%v err=%v", ok, err, tt.isRef, tt.wantErr)
			}
			if ok && err == nil && !cmp.Equal(r.path, tt.path) {
				t.Errorf("got path %q, want %q", r.path, tt.path)
			}
		})
	}
}

func TestToTextKeepsHTML(t *testing.T) {
	got := toText(map[string]any{"q": "<a&b>"})
	if want := `{"q":"<a&b>"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// FuzzReferences checks that parsing and substituting never panic, and the
// one-pass property: whatever the substituted values hold ($<< included),
// the output is the template's literal text with each reference replaced
// once, and nothing in a value is substituted again.
func FuzzReferences(f *testing.F) {
	for _, s := range []string{"$<<a>>", "x $<<a.b.0>> y", "$$<<a>>", "$<<", "$5 #E1 $<", "$<<a>>$<<b.c>>", "$<<a b>>", "$$$<<a>>"} {
		f.Add(s, "$<<a>>")
		f.Add(s, "plain")
	}
	f.Fuzz(func(t *testing.T, tmplText, value string) {
		parts, err := parseText(tmplText)
		if err != nil {
			return
		}
		c := compiler{onRef: func([]string, *ref, bool) {}, onErr: func([]string, error) {}}
		tm := c.compile(tmplText, []string{"args"})
		calls := 0
		got, err := tm.eval(func(r *ref) (any, error) {
			calls++
			return value, nil
		}, nil, nil)
		if err != nil {
			t.Fatalf("eval: %v", err)
		}
		var want strings.Builder
		refs := 0
		for _, p := range parts {
			if p.ref != nil {
				refs++
				want.WriteString(value)
			} else {
				want.WriteString(p.text)
			}
		}
		if calls != refs {
			t.Fatalf("%d substitutions for %d references", calls, refs)
		}
		if got != want.String() {
			t.Fatalf("got %q, want %q", got, want.String())
		}
		// Values of any JSON type go in whole, and the result re-encodes.
		obj := map[string]any{"v": value, "n": json.Number("1")}
		if _, err := tm.eval(func(*ref) (any, error) { return obj, nil }, nil, nil); err != nil {
			t.Fatal(err)
		}
		_ = toText(obj)
	})
}
