package proxy

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rooms of package proxy by level, from the client's side down to the
// wire (see doc.go). Data flows one way, down this list: a room may use the
// names declared in its own level and in the levels below it. A use of a
// name declared in a level above is a use that runs back up. Integrity,
// the glue between the catalog and proxy/integrity, sits beside the hub:
// the hub vets and screens through it, and it reads the hub's catalog.
// "shared" is what every room uses (who is calling, errors, metrics); it
// is the lowest level, so it may use no other.
var roomLevels = [][]string{
	{"front door"},
	{"server"},
	{"hub", "integrity"},
	{"upstream"},
	{"shared"},
}

// rooms maps each file of package proxy, tests aside, to its room (the
// rooms that are packages of their own, internal/upstream and
// internal/wire, are checked by TestUpstreamImportsNothingAbove; the
// meta-tools and plans are package metatools, which cannot import this
// one). A new
// file must be given one here: TestRoomsFlowOneWay fails on a file it does
// not know.
var rooms = map[string]string{

	"server.go":              "server",
	"hints.go":               "server",
	"ratelimit.go":           "server",
	"http.go":                "server",
	"grace.go":               "server",
	"drain.go":               "server",
	"passthrough.go":         "server",
	"serve_stdio.go":         "server",
	"serve_stdio_session.go": "server",
	"serve_stdio_reply.go":   "server",
	"listgate.go":            "server",
	"sessionseal.go":         "server",
	"metatools.go":           "server", // the glue of package metatools

	"hub.go":      "hub",
	"pipeline.go": "hub",
	"catalog.go":  "hub",
	"indexer.go":  "hub",
	"startup.go":  "hub",
	"hubapply.go": "hub",
	"tracing.go":  "server",

	"vet.go":        "integrity",
	"resultscan.go": "integrity",

	"upstream_api.go": "shared",

	"metrics.go": "shared",
	"doc.go":     "shared",
}

// sealedRooms may not use a name of a room above them at all. The
// upstreams themselves are package internal/upstream, which cannot import
// this one; what stays here of their room are the names proxy re-exports
// (upstream_api.go), and they must not reach up either.
var sealedRooms = []string{"upstream"}

// allowedUp lists the uses, "room: name", that a sealed room may make of
// a room above it, each with its reason. None has to stay today.
var allowedUp = map[string]string{}

// TestRoomsFlowOneWay counts, per room of package proxy, the uses of names
// declared in a room above, and fails when a sealed room has any (beyond
// allowedUp) or when a file has no room. Run it with -v for the counts.
func TestRoomsFlowOneWay(t *testing.T) {
	p := loadRooms(t)
	rank := map[string]int{}
	for i, level := range roomLevels {
		for _, r := range level {
			rank[r] = i
		}
	}
	for _, f := range p.allFiles {
		if _, ok := rank[rooms[f]]; !ok {
			t.Errorf("%s has no room: give it one in rooms (rooms_test.go)", f)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(rooms)) {
		if !slices.Contains(p.allFiles, f) {
			t.Errorf("rooms names %s, which is not a file of the package: remove it", f)
		}
	}
	if t.Failed() {
		return
	}
	ups := p.usesUp(rank)
	t.Logf("files per room: %s", p.filesPerRoom())
	t.Logf("uses running back up: %d", len(ups))
	for _, line := range summarize(ups) {
		t.Log(line)
	}
	for _, u := range ups {
		if !slices.Contains(sealedRooms, u.fromRoom) {
			continue
		}
		if _, ok := allowedUp[u.fromRoom+": "+u.name]; ok {
			continue
		}
		t.Errorf("%s (%s room) uses %s, declared in %s (%s room): the %s room reaches a room above only through what it is handed",
			u.at, u.fromRoom, u.name, u.declFile, u.toRoom, u.fromRoom)
	}
}

// roomsPackage is package proxy, type-checked.
type roomsPackage struct {
	fset     *token.FileSet
	files    []*ast.File
	info     *types.Info
	pkg      *types.Package
	allFiles []string             // every non-test Go file, for any platform
	owners   map[token.Pos]string // a struct field's name -> its struct type's name
}

// loadRooms parses and type-checks the package's files for this platform
// (a file built only elsewhere is checked to have a room, not counted),
// importing its dependencies from the export data `go list -export`
// reports.
func loadRooms(t *testing.T) *roomsPackage {
	t.Helper()
	bp, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatalf("reading the package: %v", err)
	}
	p := &roomsPackage{fset: token.NewFileSet(), owners: map[token.Pos]string{}}
	for _, f := range slices.Concat(bp.GoFiles, bp.IgnoredGoFiles) {
		if !strings.HasSuffix(f, "_test.go") {
			p.allFiles = append(p.allFiles, f)
		}
	}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(p.fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parsing: %v", err)
		}
		p.files = append(p.files, f)
		p.recordOwners(f)
	}
	exports := exportData(t)
	imp := importer.ForCompiler(p.fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	conf := types.Config{Importer: imp}
	p.info = &types.Info{Uses: map[*ast.Ident]types.Object{}}
	p.pkg, err = conf.Check(bp.ImportPath, p.fset, p.files, p.info)
	if err != nil {
		t.Fatalf("type-checking: %v", err)
	}
	return p
}

// exportData maps each dependency's import path to its export data file,
// as `go list -export -deps` builds them.
func exportData(t *testing.T) map[string]string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the dependencies' export data: %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), goCmd, "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, _ := strings.Cut(sc.Text(), "\t")
		if file != "" {
			m[path] = file
		}
	}
	return m
}

// recordOwners notes, for each field of a struct type declared at the top
// of f, the type's name, so that a field is reported as Type.field.
func (p *roomsPackage) recordOwners(f *ast.File) {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range gd.Specs {
			ts, ok := s.(*ast.TypeSpec)
			if !ok {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, fl := range st.Fields.List {
				for _, n := range fl.Names {
					p.owners[n.Pos()] = ts.Name.Name
				}
				if len(fl.Names) == 0 { // embedded: the field's position is its type's
					p.owners[fl.Type.Pos()] = ts.Name.Name
				}
			}
		}
	}
}

// useUp is one use of a name declared in a room above the user's.
type useUp struct {
	at               string // file:line of the use
	fromRoom, toRoom string
	name, declFile   string
}

// usesUp lists the uses, in every file, of names of the package declared
// in a room above the file's own.
func (p *roomsPackage) usesUp(rank map[string]int) []useUp {
	var out []useUp
	for id, obj := range p.info.Uses {
		if obj.Pkg() != p.pkg || !obj.Pos().IsValid() {
			continue
		}
		use, decl := p.fset.Position(id.Pos()), p.fset.Position(obj.Pos())
		from, to := rooms[filepath.Base(use.Filename)], rooms[filepath.Base(decl.Filename)]
		if rank[to] >= rank[from] {
			continue // its own room, or one below
		}
		out = append(out, useUp{
			at:       fmt.Sprintf("%s:%d", filepath.Base(use.Filename), use.Line),
			fromRoom: from, toRoom: to, name: p.qualified(obj), declFile: filepath.Base(decl.Filename),
		})
	}
	slices.SortFunc(out, func(a, b useUp) int {
		return cmp.Or(cmp.Compare(a.fromRoom, b.fromRoom), cmp.Compare(a.toRoom, b.toRoom), cmp.Compare(a.at, b.at))
	})
	return out
}

// qualified is obj's name, with its receiver's or struct's for a method or
// field.
func (p *roomsPackage) qualified(obj types.Object) string {
	switch o := obj.(type) {
	case *types.Func:
		if recv := o.Signature().Recv(); recv != nil {
			t := recv.Type()
			if ptr, ok := t.(*types.Pointer); ok {
				t = ptr.Elem()
			}
			if n, ok := t.(*types.Named); ok {
				return n.Obj().Name() + "." + o.Name()
			}
		}
	case *types.Var:
		if owner, ok := p.owners[o.Pos()]; ok && o.IsField() {
			return owner + "." + o.Name()
		}
	}
	return obj.Name()
}

// filesPerRoom says how many files each room has, for this platform.
func (p *roomsPackage) filesPerRoom() string {
	n := map[string]int{}
	for _, f := range p.allFiles {
		n[rooms[f]]++
	}
	var parts []string
	for _, r := range slices.Concat(roomLevels...) {
		parts = append(parts, fmt.Sprintf("%s %d", r, n[r]))
	}
	return strings.Join(parts, ", ")
}

// summarize counts the uses by room and the room above they reach, by
// using file and by name.
func summarize(ups []useUp) []string {
	type edge struct{ from, to string }
	byName := map[edge]map[string]int{}
	byFile := map[edge]map[string]int{}
	var edges []edge
	for _, u := range ups {
		e := edge{u.fromRoom, u.toRoom}
		if byName[e] == nil {
			byName[e], byFile[e] = map[string]int{}, map[string]int{}
			edges = append(edges, e)
		}
		byName[e][u.name]++
		file, _, _ := strings.Cut(u.at, ":")
		byFile[e][file]++
	}
	var out []string
	for _, e := range edges {
		total := 0
		for _, n := range byName[e] {
			total += n
		}
		out = append(out, fmt.Sprintf("  %s -> %s: %d uses; in %s; of %s", e.from, e.to, total,
			counted(byFile[e]), counted(byName[e])))
	}
	return out
}

// counted lists m's keys, sorted, each with its count.
func counted(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// aboveUpstream are the packages of the rooms above the upstreams, and
// the packages beside the server, that package internal/upstream must
// not import: it is handed what it needs (upstream.Env), so data flows
// one way, hub to upstream. (It cannot import package proxy itself: that
// would be a cycle.)
var aboveUpstream = []string{
	"github.com/mcp-router/mcp-router/proxy/frontdoor",
	"github.com/mcp-router/mcp-router/routing",
	"github.com/mcp-router/mcp-router/planner",
	"github.com/mcp-router/mcp-router/executor",
}

// TestUpstreamImportsNothingAbove fails when package internal/upstream,
// or anything it imports, imports a package of a room above it.
func TestUpstreamImportsNothingAbove(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), goCmd, "list", "-deps", "-f", "{{.ImportPath}}", "./internal/upstream")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderr.String())
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/mcp-router/mcp-router/proxy/internal/wire") {
		t.Fatalf("go list -deps ./internal/upstream does not list the wire package it uses: %q", deps)
	}
	for _, above := range aboveUpstream {
		if slices.Contains(deps, above) {
			t.Errorf("internal/upstream imports %s, a room above it: hand it what it needs in upstream.Env", above)
		}
	}
}
