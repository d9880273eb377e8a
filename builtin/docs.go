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
	"io"
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
	builtInDocs    = "mcp-router's built-in documentation" // what is searched without --root
	// manualDomainKey is the _meta key (routing.DomainMeta) under which the built-in manual's tool
	// declares its domain, mcp-router, exclusive: ranked only for requests that name it.
	manualDomainKey = "io.github.mcp-router/domain"
)

// docFormats maps the file extensions that are indexed to how their headings are written.
var docFormats = map[string]format{".md": markdown, ".markdown": markdown, ".txt": plainText, ".rst": restructured}

var searchDocumentsTool = mcp.NewTool("search_documents", readOnly(false,
	mcp.WithDescription("Search the local documentation: the Markdown and text files (.md, .markdown, .txt, .rst) "+
		"in the configured documents folder. Ranks passages by keyword relevance (BM25) and returns the best ones "+
		"with their file path, section heading, line and text. Use specific words from the topic you need."),
	mcp.WithString("query", mcp.Required(), mcp.Description("Words to look for, e.g. \"configure proxy timeout\".")),
	mcp.WithNumber("limit", mcp.DefaultNumber(defaultResults), mcp.Min(1), mcp.Max(maxResults),
		mcp.Description("How many passages to return (default 5, at most 50).")),
	mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},`+
		`"results":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},`+
		`"heading":{"type":"string"},"line":{"type":"integer"},"score":{"type":"number"},"text":{"type":"string"}},`+
		`"required":["path","heading","line","score","text"]}}},"required":["query","results"]}`)),
)...)

// docs serves search_documents over the files under root, re-indexed when a search finds them
// changed; without a root, over mcp-router's own documentation, embedded in the binary.
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
	tool := searchDocumentsTool
	if !set {
		tool.Meta = mcp.NewMetaFromMap(map[string]any{manualDomainKey: map[string]any{"name": "mcp-router", "exclusive": true}})
	}
	srv.AddTool(tool, d.search)
	return srv, nil
}

type docHit struct {
	Path    string  `json:"path"`
	Heading string  `json:"heading"`
	Line    int     `json:"line"`
	Score   float64 `json:"score"`
	Text    string  `json:"text"`
}

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

// current returns the index of the documents, rebuilt when a stat walk finds them changed. Files
// under a root are read through an os.Root of the folder, so nothing outside it is read.
func (d *docs) current(ctx context.Context) (*bm25Index, error) {
	fsys, read := d.embedded, func(path string) ([]byte, error) { return fs.ReadFile(d.embedded, path) }
	if fsys == nil {
		root, err := openDocsRoot(d.root)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		fsys, read = root.FS(), func(path string) ([]byte, error) { return readConfined(root, path) }
	}
	files, st, err := scanDocs(ctx, fsys, d.root)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.index != nil && st == d.stamp {
		return d.index, nil
	}
	ix, err := buildIndex(ctx, files, read)
	if err != nil {
		return nil, err
	}
	d.index, d.stamp = ix, st
	return ix, nil
}

// stamp summarises a scan so that any change shows: the count, the newest modification time and a
// hash of every path, size and time (renames and files restored with an older time included).
type stamp struct {
	count    int
	newest   int64
	checksum uint64
}

// scanDocs lists the documents in fsys (the folder dir) as slash-separated relative paths,
// skipping hidden files and folders and what confined refuses, without reading them.
func scanDocs(ctx context.Context, fsys fs.FS, dir string) ([]string, stamp, error) {
	s := scan{fsys: fsys, hash: fnv.New64a()}
	err := fs.WalkDir(fsys, ".", func(path string, e fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if path == "." {
			return err
		}
		if err != nil || strings.HasPrefix(e.Name(), ".") {
			if e != nil && e.IsDir() {
				return filepath.SkipDir // a hidden or unreadable folder
			}
			return nil
		}
		if !e.IsDir() {
			s.add(path)
		}
		return nil
	})
	if err != nil {
		return nil, stamp{}, fmt.Errorf("reading the documents folder %s: %w", describeRoot(dir), err)
	}
	s.stamp.checksum = s.hash.Sum64()
	return s.files, s.stamp, nil
}

type scan struct {
	fsys  fs.FS
	hash  hash.Hash64
	files []string
	stamp stamp
}

// add records the file at path if it is a document of a known type that confined accepts.
func (s *scan) add(path string) {
	if _, ok := docFormats[strings.ToLower(filepath.Ext(path))]; !ok {
		return
	}
	info, err := fs.Stat(s.fsys, path) // an os.Root follows a link only within the root
	if err != nil || confined(info) != nil {
		return
	}
	s.files = append(s.files, path)
	mtime := info.ModTime().UnixNano()
	s.stamp.count, s.stamp.newest = s.stamp.count+1, max(s.stamp.newest, mtime)
	s.hash.Write([]byte(path))
	s.hash.Write(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(info.Size())), uint64(mtime)))
}

// openDocsRoot opens the documents folder (which may be a symbolic link) as an os.Root.
func openDocsRoot(dir string) (*os.Root, error) {
	if err := checkRoot(dir); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the documents folder %s: %w", describeRoot(dir), err)
	}
	return root, nil
}

// confined refuses what an os.Root opens but the docs server must not read: anything but a regular
// file, a file over maxDocBytes, and a file with more than one hard link (its other name may be
// outside the folder, a secret linked in). Symbolic links and ".." are the os.Root's to refuse.
func confined(info fs.FileInfo) error {
	switch {
	case !info.Mode().IsRegular():
		return errors.New("not a regular file")
	case info.Size() > maxDocBytes:
		return fmt.Errorf("over %d bytes", maxDocBytes)
	case hardLinks(info) > 1:
		return errors.New("it has more than one hard link")
	}
	return nil
}

// readConfined reads the document at path through root, checking what was opened (fstat), so a file
// swapped for a link after the scan is refused all the same.
func readConfined(root *os.Root, path string) ([]byte, error) {
	f, err := root.Open(filepath.FromSlash(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := confined(info); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io.ReadAll(io.LimitReader(f, maxDocBytes))
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

// describeRoot quotes root and, when relative, where it resolved to: a desktop client often starts
// the server in a working directory its user does not expect.
func describeRoot(root string) string {
	if abs, err := filepath.Abs(root); err == nil && !filepath.IsAbs(root) {
		return fmt.Sprintf("%q (%s)", root, abs)
	}
	return fmt.Sprintf("%q", root)
}

// buildIndex reads, splits and indexes files, skipping those that vanished or look binary.
func buildIndex(ctx context.Context, files []string, read func(string) ([]byte, error)) (*bm25Index, error) {
	var passages []passage
	indexed := 0
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		content, err := read(f)
		if err != nil || bytes.IndexByte(content[:min(len(content), 8000)], 0) >= 0 {
			continue
		}
		content = bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
		text := strings.ToValidUTF8(string(content), "\uFFFD")
		passages = append(passages, splitPassages(f, text, docFormats[strings.ToLower(filepath.Ext(f))])...)
		indexed++
	}
	return newBM25Index(passages, indexed), nil
}
