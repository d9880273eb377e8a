package routing

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize(t *testing.T) {
	tok := NewTokenizer(TokenizerOptions{})
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"snake case", "list_dir", []string{"list", "dir"}},
		{"camel case joined when two parts", "listDirectory", []string{"list", "directori", "listdirectori"}},
		{"camel case of three parts", "getUserProfile", []string{"get", "user", "profil"}},
		{"acronym then word", "HTTPServer", []string{"http", "server", "httpserver"}},
		{"letters and digits stay together", "base64Encode sha256", []string{"base64", "encod", "base64encode", "sha256"}},
		{"kebab and dotted", "fs.read-file", []string{"fs", "read", "file"}},
		{"stop words and numbers dropped", "the area of a triangle with base 10", []string{"area", "triangl", "base"}},
		{"stemming", "Retrieves the running processes", []string{"retriev", "run", "process"}},
		{"CJK bigrams", "天气预报", []string{"天气", "气预", "预报"}},
		{"lone CJK character", "猫", []string{"猫"}},
		{"Katakana with the prolonged sound mark", "データ", []string{"デー", "ータ"}},
		{"accented word", "Café crème", []string{"café", "crème"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tok.Tokens(tc.in)); diff != "" {
				t.Errorf("Tokens(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestQueryTokenizerDropsFiller(t *testing.T) {
	ix := NewIndex(IndexOptions{})
	var got []string
	ix.qTok.each("Can you please help me find something interesting", func(term string, _ wordKind) {
		got = append(got, term)
	})
	if diff := cmp.Diff([]string{"find"}, got); diff != "" {
		t.Errorf("query terms mismatch (-want +got):\n%s", diff)
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"getUserProfile", "HTTPServer_v2", "天气预报 weather", "a.b-c_d", "\xff\xfe", "ÀÉÎ̃õ", "x\u0301y",
		"ภาษาไทย", "한국어 텍스트", "...", "", "Find X. Then do Y; also Z",
	} {
		f.Add(s)
	}
	doc := NewTokenizer(TokenizerOptions{})
	raw := NewTokenizer(TokenizerOptions{NoStem: true})
	query := &Tokenizer{query: true}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range []*Tokenizer{doc, raw, query} {
			for _, term := range tok.Tokens(s) {
				if term == "" {
					t.Fatalf("Tokens(%q) has an empty term", s)
				}
				if strings.ContainsAny(term, " \t\n") {
					t.Fatalf("Tokens(%q) has term %q with a space", s, term)
				}
			}
		}
		for _, c := range segments(s, maxSegments) {
			if strings.TrimSpace(c) == "" || c != strings.TrimSpace(c) {
				t.Fatalf("segments(%q) has clause %q", s, c)
			}
		}
		if n := len(segments(s, maxSegments)); n > maxSegments {
			t.Fatalf("segments(%q) has %d clauses, want at most %d", s, n, maxSegments)
		}
	})
}
