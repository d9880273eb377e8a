package mcprouter

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// mdLink is an inline Markdown link or image: [text](target) or ![alt](target).
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)\)`)

// TestDocsLinksResolve: every relative link in README.md and docs/*.md names
// a file of the repository, and an anchor (#heading) names a heading of the
// page it points to, as GitHub renders it.
func TestDocsLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range append([]string{"README.md"}, pages...) {
		for n, line := range strings.Split(readFile(t, page), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(stripCode(line), -1) {
				if problem := checkLink(t, page, m[1]); problem != "" {
					t.Errorf("%s:%d: link %s: %s", page, n+1, m[1], problem)
				}
			}
		}
	}
}

// TestEveryDocsPageIsLinkedFromTheReadme: the README is the way in, so
// every page of docs/ is one link away from it.
func TestEveryDocsPageIsLinkedFromTheReadme(t *testing.T) {
	readme := readFile(t, "README.md")
	entries, err := os.ReadDir("docs")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") && !strings.Contains(readme, "(docs/"+e.Name()) {
			t.Errorf("README.md links no docs/%s: add it to the list of pages", e.Name())
		}
	}
}

// TestReadmeFitsOnTwoScreens: the README is the way in, not the manual;
// what does not fit goes to a page of docs/.
func TestReadmeFitsOnTwoScreens(t *testing.T) {
	if n := strings.Count(readFile(t, "README.md"), "\n"); n > 300 {
		t.Errorf("README.md has %d lines, want at most 300: move detail to a page of docs/", n)
	}
}

// checkLink says what is wrong with a link target of page, or "".
func checkLink(t *testing.T, page, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return "" // not ours to check offline
	}
	file, anchor, _ := strings.Cut(target, "#")
	if file == "" {
		file = page
	} else {
		file = path.Join(path.Dir(page), file)
	}
	if _, err := os.Stat(file); err != nil {
		return "no such file " + file
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(file, ".md") {
		return "an anchor into a file that is not Markdown"
	}
	for _, a := range anchors(readFile(t, file)) {
		if a == anchor {
			return ""
		}
	}
	return "no heading of " + file + " makes the anchor #" + anchor
}

// anchors returns the anchors GitHub makes of a page's headings: lower case,
// punctuation but - and _ dropped, spaces as -, and -1, -2 for repeats.
func anchors(page string) []string {
	var out []string
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		a := slug(strings.TrimSpace(strings.TrimLeft(line, "#")))
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// stripCode blanks inline code spans, where brackets are not links.
func stripCode(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = ""
	}
	return strings.Join(parts, "`")
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
