package builtin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeTree writes files (slash-separated path to content) under a new temporary folder.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
	return root
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// docsTree is a documents folder with files that must and must not be searched.
var docsTree = map[string]string{
	"guide/install.md":   "# Installing\n\nDownload the binary and put it on your PATH.\n\n## Docker\n\nRun the container image with docker run.\n",
	"guide/config.md":    "# Configuration\n\nThe proxy timeout is set in profiles.yaml.\n",
	"notes.txt":          "Plain notes about docker networking.\n",
	"api.rst":            "API\n===\n\nThe search endpoint returns passages.\n",
	"upper.MD":           "Upper-case extensions count: walrus.\n",
	".hidden/secret.md":  "docker walrus secret\n",
	"guide/.draft.md":    "docker walrus draft\n",
	"image.png":          "docker walrus\n",
	"README":             "docker walrus\n",
	"guide/binary.txt":   "docker\x00walrus\n",
	"deep/a/b/c/leaf.md": "Deep leaf about walrus habitats.\n",
}

func searchArgs(query string, limit any) map[string]any {
	args := map[string]any{"query": query}
	if limit != nil {
		args["limit"] = limit
	}
	return args
}

func TestSearchDocuments(t *testing.T) {
	root := writeTree(t, docsTree)
	writeFile(t, filepath.Join(root, "big.md"), strings.Repeat("docker walrus ", maxDocBytes/10))
	c := start(t, "docs", "--root", root)
	tests := []struct {
		name      string
		query     string
		limit     any
		wantPaths []string // sorted, when the order is not the point
		wantFirst docHit   // path, heading, line and text of the best passage
	}{
		{"hidden, binary, oversized and other files are skipped", "docker", nil,
			[]string{"guide/install.md", "notes.txt"},
			docHit{Path: "guide/install.md", Heading: "Installing > Docker", Line: 7, Text: "Run the container image with docker run."}},
		{"paths are relative and slash-separated", "walrus", nil,
			[]string{"deep/a/b/c/leaf.md", "upper.MD"},
			docHit{Path: "deep/a/b/c/leaf.md", Line: 1, Text: "Deep leaf about walrus habitats."}},
		{"markdown sections keep their heading", "proxy timeout", nil,
			[]string{"guide/config.md"},
			docHit{Path: "guide/config.md", Heading: "Configuration", Line: 3, Text: "The proxy timeout is set in profiles.yaml."}},
		{"reStructuredText titles are headings", "SEARCH endpoint", nil,
			[]string{"api.rst"},
			docHit{Path: "api.rst", Heading: "API", Line: 4, Text: "The search endpoint returns passages."}},
		{"limit", "docker", 1,
			[]string{"guide/install.md"},
			docHit{Path: "guide/install.md", Heading: "Installing > Docker", Line: 7, Text: "Run the container image with docker run."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "search_documents", searchArgs(tt.query, tt.limit))
			got := structured[docsResult](t, res)
			if got.Query != tt.query {
				t.Errorf("query: got %q, want %q", got.Query, tt.query)
			}
			if len(got.Results) == 0 {
				t.Fatalf("got no results, want %v", tt.wantPaths)
			}
			var paths []string
			for _, h := range got.Results {
				paths = append(paths, h.Path)
				if h.Score <= 0 {
					t.Errorf("%s: got score %v, want > 0", h.Path, h.Score)
				}
				if !strings.Contains(text(res), h.Path) {
					t.Errorf("text content %q: missing %s", text(res), h.Path)
				}
			}
			slices.Sort(paths)
			if diff := cmp.Diff(tt.wantPaths, paths); diff != "" {
				t.Errorf("paths mismatch (-want +got):\n%s", diff)
			}
			first := got.Results[0]
			first.Score = 0
			if diff := cmp.Diff(tt.wantFirst, first); diff != "" {
				t.Errorf("best passage mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSearchDocumentsFindsNothing(t *testing.T) {
	root := writeTree(t, docsTree)
	empty := t.TempDir()
	tests := []struct {
		name     string
		root     string
		query    string
		wantText string
	}{
		{"no passage matches", root, "zebra crossing", "Nothing matched \"zebra crossing\" in the 6 documents"},
		{"only common words", root, "what is the", "only common words"},
		{"no documents", empty, "docker", "has no .md, .markdown, .txt or .rst files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, "docs", "--root", tt.root)
			res := call(t, c, "search_documents", searchArgs(tt.query, nil))
			got := structured[docsResult](t, res)
			want := docsResult{Query: tt.query, Results: []docHit{}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(text(res), tt.wantText) {
				t.Errorf("text: got %q, want it to contain %q", text(res), tt.wantText)
			}
		})
	}
}

func TestSearchDocumentsErrors(t *testing.T) {
	root := writeTree(t, docsTree)
	file := filepath.Join(root, "notes.txt")
	missing := filepath.Join(root, "nowhere")
	tests := []struct {
		name  string
		root  string
		args  map[string]any
		wants []string
	}{
		{"empty query", root, searchArgs("  ", nil), []string{`"query"`, "empty"}},
		{"missing query", root, map[string]any{}, []string{`"query"`, "required"}},
		{"limit zero", root, searchArgs("docker", 0), []string{`"limit"`, "at least 1"}},
		{"limit not a number", root, searchArgs("docker", "many"), []string{`"limit"`, "number"}},
		{"missing root", missing, searchArgs("docker", nil), []string{missing, "does not exist", "--root"}},
		{"root is a file", file, searchArgs("docker", nil), []string{file, "not a folder"}},
		{"relative root says where it resolved", "./no-such-docs-folder", searchArgs("docker", nil),
			[]string{`"./no-such-docs-folder"`, string(filepath.Separator) + "no-such-docs-folder)", "does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, "docs", "--root", tt.root)
			wantError(t, call(t, c, "search_documents", tt.args), append([]string{"search_documents:"}, tt.wants...)...)
		})
	}
}

func TestSearchDocumentsFollowsALinkedRoot(t *testing.T) {
	target := writeTree(t, map[string]string{"notes/walrus.md": "# Walrus\n\nTusks.\n"})
	link := filepath.Join(t.TempDir(), "docs-link")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	c := start(t, "docs", "--root", link)
	got := structured[docsResult](t, call(t, c, "search_documents", searchArgs("tusks", nil)))
	if len(got.Results) != 1 || got.Results[0].Path != "notes/walrus.md" {
		t.Errorf("search through a linked root: got %+v, want one result in notes/walrus.md", got.Results)
	}
}

func TestSearchDocumentsLimitIsCapped(t *testing.T) {
	files := map[string]string{}
	for i := range 60 {
		files[filepath.Join("many", strings.Repeat("x", i+1)+".md")] = "walrus\n"
	}
	c := start(t, "docs", "--root", writeTree(t, files))
	got := structured[docsResult](t, call(t, c, "search_documents", searchArgs("walrus", 1000)))
	if len(got.Results) != maxResults {
		t.Errorf("got %d results, want the cap of %d", len(got.Results), maxResults)
	}
	if got.Results[0].Path != "many/x.md" {
		t.Errorf("equal scores: got %s first, want many/x.md (ties go to the first path)", got.Results[0].Path)
	}
}

func TestSearchDocumentsSeesChanges(t *testing.T) {
	root := writeTree(t, docsTree)
	c := start(t, "docs", "--root", root)
	paths := func(query string) []string {
		t.Helper()
		got := []string{}
		for _, h := range structured[docsResult](t, call(t, c, "search_documents", searchArgs(query, nil))).Results {
			got = append(got, h.Path)
		}
		return got
	}
	later := time.Now().Add(time.Hour)
	steps := []struct {
		name   string
		change func()
		query  string
		want   []string
	}{
		{"before", func() {}, "zebra", []string{}},
		{"a new file", func() { writeFile(t, filepath.Join(root, "zoo.md"), "# Zoo\n\nA zebra.\n") }, "zebra", []string{"zoo.md"}},
		{"an edited file of the same size and an older time", func() {
			path := filepath.Join(root, "notes.txt")
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, "Plain notes about zebra networking.\n") // same length as before
			if err := os.Chtimes(path, info.ModTime(), info.ModTime().Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, "zebra", []string{"notes.txt", "zoo.md"}},
		{"a renamed file", func() {
			if err := os.Rename(filepath.Join(root, "zoo.md"), filepath.Join(root, "zoo2.md")); err != nil {
				t.Fatal(err)
			}
		}, "zoo", []string{"zoo2.md"}},
		{"a removed file", func() {
			if err := os.Remove(filepath.Join(root, "zoo2.md")); err != nil {
				t.Fatal(err)
			}
		}, "zoo", []string{}},
		{"a touched file", func() {
			if err := os.Chtimes(filepath.Join(root, "api.rst"), later, later); err != nil {
				t.Fatal(err)
			}
		}, "endpoint", []string{"api.rst"}},
	}
	for _, step := range steps {
		step.change()
		got := paths(step.query)
		slices.Sort(got)
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("after %s: search %q mismatch (-want +got):\n%s", step.name, step.query, diff)
		}
	}
}

func TestDocsIndexIsReusedUntilFilesChange(t *testing.T) {
	root := writeTree(t, docsTree)
	d := &docs{root: root}
	first, err := d.current(t.Context())
	if err != nil {
		t.Fatalf("current: %v", err)
	}
	again, err := d.current(t.Context())
	if err != nil {
		t.Fatalf("current: %v", err)
	}
	if again != first {
		t.Errorf("unchanged files: got a rebuilt index, want the cached one")
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "notes.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := d.current(t.Context())
	if err != nil {
		t.Fatalf("current: %v", err)
	}
	if rebuilt == first {
		t.Errorf("touched file: got the cached index, want a rebuilt one")
	}
	if first.files != 6 || rebuilt.files != 6 {
		t.Errorf("indexed files: got %d and %d, want 6 (the binary .txt is skipped)", first.files, rebuilt.files)
	}
}

func BenchmarkSearchDocuments(b *testing.B) {
	root := b.TempDir()
	for i := range 200 {
		path := filepath.Join(root, "d", strings.Repeat("n", i%7+1), "doc"+strings.Repeat("x", i%13)+string(rune('a'+i%26))+".md")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		content := strings.Repeat("# Section\n\nSome words about proxies, timeouts and routing of tools.\n\n", 20)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	c := start(b, "docs", "--root", root)
	args := searchArgs("routing timeouts", nil)
	for b.Loop() {
		if res := call(b, c, "search_documents", args); res.IsError {
			b.Fatalf("search: %s", text(res))
		}
	}
}

// Without --root the server searches mcp-router's own documentation, built
// in, wherever it runs: here from an empty working directory.
func TestSearchDocumentsWithoutRootSearchesBuiltInDocs(t *testing.T) {
	t.Chdir(t.TempDir())
	c := start(t, "docs")
	res := call(t, c, "search_documents", searchArgs("bearer token serve http", 3))
	got := structured[docsResult](t, res)
	if res.IsError || len(got.Results) == 0 {
		t.Fatalf("got %s, want passages from the built-in documentation", text(res))
	}
	var paths []string
	for _, h := range got.Results {
		paths = append(paths, h.Path)
	}
	if !slices.Contains(paths, "README.md") {
		t.Errorf("paths %v, want README.md among them", paths)
	}
	res = call(t, c, "search_documents", searchArgs("zyzzyvas quixotry", nil))
	if res.IsError || !strings.Contains(text(res), "mcp-router's built-in documentation") {
		t.Errorf("nothing found: got %q, want it to name the built-in documentation", text(res))
	}
}

// TestNoSecretLeavesFromTheDocsFolder: the docs server reads nothing outside its folder: not
// through a symbolic link to a file or a folder outside, not through a link made of "..", not
// through a hard link to a file outside (a file with more than one link is skipped); a link
// that stays inside the folder is followed.
func TestNoSecretLeavesFromTheDocsFolder(t *testing.T) {
	outside := writeTree(t, map[string]string{"secret.md": "# Vault\n\nplatypus-password\n",
		"dir/inner.md": "# Inner\n\nplatypus-inner\n", "hard.md": "# Hard\n\nplatypus-hardlink\n"})
	root := writeTree(t, map[string]string{"notes/walrus.md": "# Walrus\n\nTusks.\n"})
	links := map[string]string{
		"to-file.md":      filepath.Join(outside, "secret.md"),
		"to-dir":          filepath.Join(outside, "dir"),
		"dotdot.md":       filepath.Join("..", filepath.Base(outside), "secret.md"),
		"notes/inside.md": "walrus.md",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Skipf("cannot make a symbolic link here: %v", err)
		}
	}
	if err := os.Link(filepath.Join(outside, "hard.md"), filepath.Join(root, "hard.md")); err != nil {
		t.Skipf("cannot make a hard link here: %v", err)
	}
	if filepath.Dir(outside) != filepath.Dir(root) {
		t.Fatalf("the test needs both folders side by side: %s, %s", outside, root)
	}
	c := start(t, "docs", "--root", root)
	got := structured[docsResult](t, call(t, c, "search_documents", searchArgs("platypus", nil)))
	if len(got.Results) != 0 {
		t.Errorf("found text from outside the folder: %+v", got.Results)
	}
	got = structured[docsResult](t, call(t, c, "search_documents", searchArgs("tusks", nil)))
	var paths []string
	for _, r := range got.Results {
		paths = append(paths, r.Path)
	}
	slices.Sort(paths)
	if want := []string{"notes/inside.md", "notes/walrus.md"}; !slices.Equal(paths, want) {
		t.Errorf("tusks: got %v, want %v (a link within the folder is followed)", paths, want)
	}
}
