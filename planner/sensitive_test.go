package planner

import "testing"

func TestSensitiveTopics(t *testing.T) {
	tp := newTopics([]string{"refund", "Legal Action", "sue", "  ", "don't"})
	for _, tc := range []struct {
		query, want string
	}{
		{"I want a refund.", "refund"},
		{"REFUND NOW", "refund"},
		{"refunds are slow", ""}, // whole words only
		{"we will take legal   action!", "Legal Action"},
		{"legal, action", "Legal Action"}, // punctuation is not a word
		{"is it legal to cache this?", ""},
		{"Sue them", "sue"},
		{"this issue is pursued", ""},
		{"I don't know", "don't"},
		{"", ""},
	} {
		if got := tp.match(tc.query); got != tc.want {
			t.Errorf("match(%q): got %q, want %q", tc.query, got, tc.want)
		}
	}
	if got := newTopics(nil).match("refund"); got != "" {
		t.Errorf("no topics: got %q, want none", got)
	}
}
