package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A small dictionary in WordNet's database format: "remember" and
// "recall" share their first sense, which links to the noun "memory";
// "log" has "logarithm" only as an untagged (rare) sense. The tagged
// corpus saw "record" 3 times as a verb and once as a noun; "quick" is
// an adjective only, "memory" a noun only.
var fixture = map[string]string{
	"index.verb": "  1 This file is part of the licence header.\n" +
		"recall v 1 2 @ + 1 1 00000100\n" +
		"record v 1 1 @ 1 1 00000600\n" +
		"remember v 1 2 @ + 1 1 00000100\n",
	"index.noun": "log n 2 1 @ 2 1 00000300 00000400\n" +
		"logarithm n 1 1 @ 1 1 00000400\n" +
		"memory n 1 1 @ 1 1 00000200\n" +
		"record n 2 1 @ 2 1 00000300 00000700\n",
	"data.verb":   "00000100 31 v 02 remember 0 recall 0 001 + 00000200 n 0101 01 + 08 00 | recall knowledge from memory\n",
	"index.adj":   "quick a 1 0 1 0 00000500\n",
	"cntlist.rev": "record%2:32:00:: 1 3\nrecord%1:10:00:: 1 1\n",
	"index.adv":   "",
	"data.noun": "00000200 09 n 01 memory 0 000 | something remembered\n" +
		"00000300 06 n 01 log 0 000 | a written record\n" +
		"00000400 23 n 02 logarithm 0 log 0 000 | the exponent\n",
}

func TestRunDerivesTheTable(t *testing.T) {
	dir := t.TempDir()
	for name, text := range fixture {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "wordnet.txt")
	if err := run(dir, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		k, v, _ := strings.Cut(l, "\t")
		lines[k] = v
	}
	if got := lines["rememb"]; got != "memori\t0" {
		t.Errorf("remember: %q, want derived memory", got)
	}
	if got, ok := lines["log"]; ok && strings.Contains(got, "logarithm") {
		t.Errorf("log: %q, want no logarithm (its second, rarer sense)", got)
	}
	// The noun share, in tenths: from the tagged counts when the corpus
	// saw the word often enough (record: 1 of 4), else from the senses
	// (quick: none of 1); empty for a noun only.
	for word, want := range map[string]string{"record": "3", "quick": "0", "memori": ""} {
		f := strings.Split(lines[word], "\t")
		if len(f) != 2 || f[1] != want {
			t.Errorf("%s: %q, want noun share %q in the last column", word, lines[word], want)
		}
	}
}

func TestRunNamesABadFile(t *testing.T) {
	dir := t.TempDir()
	for name, text := range fixture {
		if name == "data.noun" {
			text = "00000200 09 n zz memory 0 000 | bad word count\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := run(dir, filepath.Join(dir, "out.txt"))
	if err == nil || !strings.Contains(err.Error(), "data.noun line 1") {
		t.Errorf("run: %v, want an error naming data.noun line 1", err)
	}
}

// TestTableIsUpToDate: the committed table is what the generator makes
// from the installed dictionary (skipped when it is not installed).
func TestTableIsUpToDate(t *testing.T) {
	if _, err := os.Stat(filepath.Join(defaultDict, "data.noun")); err != nil {
		t.Skip("WordNet dictionary not installed")
	}
	out := filepath.Join(t.TempDir(), "wordnet.txt")
	if err := run(defaultDict, out); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(out)
	got, err := os.ReadFile(filepath.Join("..", "..", "wordnet.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("routing/wordnet.txt is stale: run go generate in package routing")
	}
}
