package builtin

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitPassages(t *testing.T) {
	long := strings.Repeat("word ", 200) // 1000 bytes in one paragraph
	tests := []struct {
		name    string
		content string
		format  format
		want    []passage // path is always "f"
	}{
		{"markdown headings make a heading path", "# Guide\n\nIntro.\n\n## Install\n\nRun it.\n\n### From source\n\nBuild it.\n\n## Use\n\nCall it.\n",
			markdown, []passage{
				{heading: "Guide", line: 3, text: "Intro."},
				{heading: "Guide > Install", line: 7, text: "Run it."},
				{heading: "Guide > Install > From source", line: 11, text: "Build it."},
				{heading: "Guide > Use", line: 15, text: "Call it."},
			}},
		{"short paragraphs are grouped", "# T\n\nOne.\n\nTwo\nlines.\n\nThree.", markdown, []passage{
			{heading: "T", line: 3, text: "One.\n\nTwo\nlines.\n\nThree."},
		}},
		{"closing hashes and setext headings", "Title\n=====\n\nA.\n\nSub ##\n--\n\nB.\n\n## Third ##\nC.", markdown, []passage{
			{heading: "Title", line: 4, text: "A."},
			{heading: "Title > Sub ##", line: 9, text: "B."},
			{heading: "Title > Third", line: 12, text: "C."},
		}},
		{"text before the first heading has no heading", "Preface.\n\n# H\n\nBody.", markdown, []passage{
			{heading: "", line: 1, text: "Preface."},
			{heading: "H", line: 5, text: "Body."},
		}},
		{"front matter is skipped", "---\ntitle: x\n---\n# H\n\nBody.", markdown, []passage{
			{heading: "H", line: 6, text: "Body."},
		}},
		{"fenced code stays whole and hides headings", "# H\n\n```sh\n# not a heading\n\nmake\n```\nAfter.", markdown, []passage{
			{heading: "H", line: 3, text: "```sh\n# not a heading\n\nmake\n```\n\nAfter."},
		}},
		{"a deeper heading is forgotten by a shallower one", "### Deep\n\nA.\n\n# Top\n\nB.", markdown, []passage{
			{heading: "Deep", line: 3, text: "A."},
			{heading: "Top", line: 7, text: "B."},
		}},
		{"rules separate paragraphs", "A.\n***\nB.", markdown, []passage{
			{heading: "", line: 1, text: "A.\n\nB."},
		}},
		{"#hashtag is not a heading", "#hashtag here", markdown, []passage{
			{heading: "", line: 1, text: "#hashtag here"},
		}},
		{"plain text has no headings", "# not\n\nx", plainText, []passage{
			{heading: "", line: 1, text: "# not\n\nx"},
		}},
		{"CRLF line ends", "# H\r\n\r\nA\r\nB\r\n", markdown, []passage{
			{heading: "H", line: 3, text: "A\nB"},
		}},
		{"reStructuredText titles", "=====\nTitle\n=====\n\nA.\n\nSection\n-------\n\nB.\n\nOther\n=====\n\nC.", restructured, []passage{
			{heading: "Title", line: 5, text: "A."},
			{heading: "Title > Section", line: 10, text: "B."},
			{heading: "Other", line: 15, text: "C."},
		}},
		{"a long paragraph is cut at spaces", long, plainText, []passage{
			{heading: "", line: 1, text: strings.TrimSpace(long[:800])},
			{heading: "", line: 1, text: strings.TrimSpace(long[800:])},
		}},
		{"empty", "", markdown, nil},
		{"only headings", "# A\n## B", markdown, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitPassages("f", tt.content, tt.format)
			for i := range tt.want {
				tt.want[i].path = "f"
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(passage{})); diff != "" {
				t.Errorf("splitPassages(%q) mismatch (-want +got):\n%s", tt.content, diff)
			}
		})
	}
}

func TestSplitPassagesGroupsUpToTheLimit(t *testing.T) {
	para := strings.Repeat("x", 300)
	content := strings.Repeat(para+"\n\n", 7)
	got := splitPassages("f", content, markdown)
	if len(got) != 4 {
		t.Fatalf("got %d passages, want 4 (two 300-byte paragraphs fit in %d)", len(got), passageChars)
	}
	for i, p := range got {
		if len(p.text) > passageChars {
			t.Errorf("passage %d: got %d bytes, want at most %d", i, len(p.text), passageChars)
		}
	}
	if wantLines := []int{1, 5, 9, 13}; got[1].line != wantLines[1] || got[3].line != wantLines[3] {
		t.Errorf("passage lines: got %d and %d, want %d and %d", got[1].line, got[3].line, wantLines[1], wantLines[3])
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"short", "a b", 10, []string{"a b"}},
		{"at a space", "aaa bbb ccc", 8, []string{"aaa bbb", "ccc"}},
		{"no space", "abcdefgh", 3, []string{"abc", "def", "gh"}},
		{"not inside a character", "ééé", 3, []string{"é", "é", "é"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, cut(tt.text, tt.limit)); diff != "" {
				t.Errorf("cut(%q, %d) mismatch (-want +got):\n%s", tt.text, tt.limit, diff)
			}
		})
	}
}
