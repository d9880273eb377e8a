package builtin

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"hash/fnv"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	mcprouter "github.com/mcp-router/mcp-router"
)

const (
	maxDocBytes    = 2 << 20 // larger files are skipped
	defaultResults = 5
	maxResults     = 50
	// builtInDocs names the documents searched without --root.
	builtInDocs = "mcp-router's built-in documentation"
)

// docFormats maps the file extensions that are indexed to how their headings are written.
var docFormats = map[string]format{".md": markdown, ".markdown": markdown, ".txt": plainText, ".rst": restructured}

var searchDocumentsTool = mcp.NewTool("search_documents",
	mcp.WithDescription("Search the local documentation: the Markdown and text files (.md, .markdown, .txt, .rst) "+
		"in the configured documents folder. Ranks passages by keyword relevance (BM25) and returns the best ones "+
		"with their file path, section heading, line and text. Use specific words from the topic you need."),
	mcp.WithString("query", mcp.Required(), mcp.Description("Words to look for, e.g. \"configure proxy timeout\".")),
	mcp.WithNumber("limit", mcp.DefaultNumber(defaultResults), mcp.Min(1), mcp.Max(maxResults),
		mcp.Description("How many passages to return (default 5, at most 50).")),
	mcp.WithReadOnlyHintAnnotation(true),
	mcp.WithDestructiveHintAnnotation(false),
	mcp.WithIdempotentHintAnnotation(true),
	mcp.WithOpenWorldHintAnnotation(false),
	mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},`+
		`"results":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},`+
		`"heading":{"type":"string"},"line":{"type":"integer"},"score":{"type":"number"},"text":{"type":"string"}},`+
		`"required":["path","heading","line","score","text"]}}},"required":["query","results"]}`)),
)

// docs serves search_documents over the files under root, indexing them on first use and again
// whenever a search finds that they changed; without a root, over mcp-router's own documentation,
// embedded in the binary, which exists wherever the server runs.
type docs struct {
	root     string
	embedded fs.FS // nil when root is a folder

	mu    sync.Mutex
	stamp stamp      // of the files index was built from
	index *bm25Index // nil until the first search
}

func newDocs(args []string) (*server.MCPServer, error) {
	fs := flag.NewFlagSet("docs", flag.ContinueOnError)
	root := fs.String("root", "", "folder whose .md, .markdown, .txt and .rst files are searched (default: mcp-router's own documentation, built in)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "root" })
	if set && strings.TrimSpace(*root) == "" {
		return nil, errors.New("flag --root must not be empty")
	}
	d := &docs{root: *root}
	if !set {
		d.root, d.embedded = builtInDocs, mcprouter.Docs
	}
	srv := newServer("docs")
	srv.AddTool(searchDocumentsTool, d.search)
	return srv, nil
}

// docHit is one passage in the structured content of search_documents.
type docHit struct {
	Path    string  `json:"path"`
	Heading string  `json:"heading"`
	Line    int     `json:"line"`
	Score   float64 `json:"score"`
	Text    string  `json:"text"`
}

// docsResult is the structured content of search_documents.
type docsResult struct {
	Query   string   `json:"query"`
	Results []docHit `json:"results"`
}

func (d *docs) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	query, err := stringArg(args, "query")
	if err != nil {
		return toolError("search_documents", err), nil
	}
	limit, err := intArg(args, "limit", defaultResults, maxResults)
	if err != nil {
		return toolError("search_documents", err), nil
	}
	ix, err := d.current(ctx)
	if err != nil {
		return toolError("search_documents", err), nil
	}
	res := docsResult{Query: query, Results: []docHit{}}
	for _, h := range ix.search(query, limit) {
		res.Results = append(res.Results, docHit{
			Path: h.passage.path, Heading: h.passage.heading, Line: h.passage.line,
			Score: math.Round(h.score*1000) / 1000, Text: h.passage.text,
		})
	}
	return mcp.NewToolResultStructured(res, d.readable(res, ix)), nil
}

// readable is the text content of a search_documents result.
func (d *docs) readable(res docsResult, ix *bm25Index) string {
	if len(res.Results) == 0 {
		return d.nothingMatched(res.Query, ix)
	}
	var b strings.Builder
	if len(res.Results) == 1 {
		fmt.Fprintf(&b, "1 passage for %q:", res.Query)
	} else {
		fmt.Fprintf(&b, "%d passages for %q, best first:", len(res.Results), res.Query)
	}
	for i, h := range res.Results {
		fmt.Fprintf(&b, "\n\n%d. %s, line %d", i+1, h.Path, h.Line)
		if h.Heading != "" {
			fmt.Fprintf(&b, " (%s)", h.Heading)
		}
		fmt.Fprintf(&b, ", score %.3f\n%s", h.Score, h.Text)
	}
	return b.String()
}

// nothingMatched says why a search found nothing.
func (d *docs) nothingMatched(query string, ix *bm25Index) string {
	switch {
	case ix.files == 0:
		return fmt.Sprintf("Nothing matched %q: the documents folder %s has no .md, .markdown, .txt or .rst files.", query, d.root)
	case d.embedded != nil:
		return fmt.Sprintf("Nothing matched %q in %s (%d documents).", query, d.root, ix.files)
	case len(tokenize(query)) == 0:
		return fmt.Sprintf("Nothing matched %q: the query has only common words; use more specific ones.", query)
	}
	return fmt.Sprintf("Nothing matched %q in the %d documents under %s.", query, ix.files, d.root)
}

// current returns the index of the files under root, rebuilding it when a stat walk finds that
// they changed since it was built.
func (d *docs) current(ctx context.Context) (*bm25Index, error) {
	if d.embedded != nil {
		return d.builtIn(ctx)
	}
	files, st, err := scanRoot(ctx, d.root)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.index != nil && st == d.stamp {
		return d.index, nil
	}
	ix, err := buildIndex(ctx, files, os.ReadFile)
	if err != nil {
		return nil, err
	}
	d.index, d.stamp = ix, st
	return ix, nil
}

// builtIn returns the index of the embedded documentation, built on first use: it never changes.
func (d *docs) builtIn(ctx context.Context) (*bm25Index, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.index != nil {
		return d.index, nil
	}
	var files []docFile
	err := fs.WalkDir(d.embedded, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if _, ok := docFormats[strings.ToLower(filepath.Ext(path))]; ok {
			files = append(files, docFile{path: path, rel: path})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", builtInDocs, err)
	}
	ix, err := buildIndex(ctx, files, func(path string) ([]byte, error) { return fs.ReadFile(d.embedded, path) })
	if err != nil {
		return nil, err
	}
	d.index = ix
	return ix, nil
}

// docFile is a document found by scanRoot.
type docFile struct {
	path string // as found by the walk
	rel  string // relative to the root, slash-separated
	size int64
}

// stamp summarises a scan, so that a change to any file shows as a different stamp: the count and
// newest modification time, and a hash of every path, size and modification time (which also
// catches renames and files restored with an older time).
type stamp struct {
	count    int
	newest   int64
	checksum uint64
}

// scanRoot lists the documents under root, skipping hidden files and folders and files over
// maxDocBytes, without reading them.
func scanRoot(ctx context.Context, root string) ([]docFile, stamp, error) {
	if err := checkRoot(root); err != nil {
		return nil, stamp{}, err
	}
	// WalkDir does not enter a root that is a symbolic link, so walk what it points to.
	walkRoot := root
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		walkRoot = resolved
	}
	s := scan{root: walkRoot, hash: fnv.New64a()}
	err := filepath.WalkDir(walkRoot, func(path string, e fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if path == walkRoot {
			return err
		}
		if err != nil || strings.HasPrefix(e.Name(), ".") {
			return skip(e)
		}
		if !e.IsDir() {
			s.add(path)
		}
		return nil
	})
	if err != nil {
		return nil, stamp{}, fmt.Errorf("reading the documents folder %s: %w", describeRoot(root), err)
	}
	s.stamp.checksum = s.hash.Sum64()
	return s.files, s.stamp, nil
}

// scan collects the documents of one walk and their stamp.
type scan struct {
	root  string
	hash  hash.Hash64
	files []docFile
	stamp stamp
}

// add records the file at path if it is a document of a known type and size.
func (s *scan) add(path string) {
	if _, ok := docFormats[strings.ToLower(filepath.Ext(path))]; !ok {
		return
	}
	info, err := os.Stat(path) // follows a symbolic link to a file
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxDocBytes {
		return
	}
	rel, _ := filepath.Rel(s.root, path)
	f := docFile{path: path, rel: filepath.ToSlash(rel), size: info.Size()}
	s.files = append(s.files, f)
	mtime := info.ModTime().UnixNano()
	s.stamp.count, s.stamp.newest = s.stamp.count+1, max(s.stamp.newest, mtime)
	s.hash.Write([]byte(f.rel))
	s.hash.Write(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(f.size)), uint64(mtime)))
}

// skip makes the walk pass over a folder, or over one file.
func skip(e fs.DirEntry) error {
	if e != nil && e.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// checkRoot reports a missing root, or one that is not a folder, in words the model can pass on.
func checkRoot(root string) error {
	info, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the documents folder %s does not exist; start the docs server with --root DIR", describeRoot(root))
	case err != nil:
		return fmt.Errorf("reading the documents folder %s: %w", describeRoot(root), err)
	case !info.IsDir():
		return fmt.Errorf("the documents folder %s is not a folder; start the docs server with --root DIR", describeRoot(root))
	}
	return nil
}

// describeRoot quotes root and, when it is relative, says where it resolved to: the working
// directory of a server started by a desktop client is often not the one its user expects.
func describeRoot(root string) string {
	if filepath.IsAbs(root) {
		return fmt.Sprintf("%q", root)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Sprintf("%q", root)
	}
	return fmt.Sprintf("%q (%s)", root, abs)
}

// buildIndex reads (with read) and splits files and indexes their passages. Files that vanished
// or look binary are skipped.
func buildIndex(ctx context.Context, files []docFile, read func(string) ([]byte, error)) (*bm25Index, error) {
	var passages []passage
	indexed := 0
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		content, err := read(f.path)
		if err != nil || bytes.IndexByte(content[:min(len(content), 8000)], 0) >= 0 {
			continue
		}
		content = bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
		text := strings.ToValidUTF8(string(content), "\uFFFD")
		passages = append(passages, splitPassages(f.rel, text, docFormats[strings.ToLower(filepath.Ext(f.path))])...)
		indexed++
	}
	return newBM25Index(passages, indexed), nil
}
