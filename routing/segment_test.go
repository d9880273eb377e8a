package routing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSegments(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"one sentence", "Find the weather in Paris", []string{"Find the weather in Paris"}},
		{"sentences", "Get the stock price. Then send an email to Bob!",
			[]string{"Get the stock price.", "Then send an email to Bob!"}},
		{"connective inside a sentence", "Find the area of a circle and also find its circumference",
			[]string{"Find the area of a circle", "and also find its circumference"}},
		{"and between two requests", "divide 81 by 9 and take the square root",
			[]string{"divide 81 by 9", "and take the square root"}},
		{"decimals and abbreviations do not split", "Add 5.0 to 3.0, e.g. now",
			[]string{"Add 5.0 to 3.0, e.g. now"}},
		{"semicolons and line breaks split", "list files; read one\nand delete it",
			[]string{"list files;", "read one", "and delete it"}},
		{"leading connective", "Then do it", []string{"Then do it"}},
		{"blank", "  ", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, segments(tc.in, maxSegments)); diff != "" {
				t.Errorf("segments(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestSegmentsLimit(t *testing.T) {
	got := segments("One. Two. Three. Four.", 3)
	want := []string{"One.", "Two.", "Three. Four."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("segments with limit 3 mismatch (-want +got):\n%s", diff)
	}
}
