package config

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The reference of every profiles.yaml key, and the fuse policy's decoder,
// whose keys the config decoder passes on unchecked (routing.fuse).
const (
	referenceFile = "../../../../docs/reference.md"
	fuseSource    = "../../../../routing/fuse/config.go"
)

// TestReferenceListsEveryKey keeps docs/reference.md true: every key the
// decoder accepts (rawConfig's yaml tags, walked as decoder.check walks them,
// and the routing.fuse keys fuse.PolicyFromMap accepts) has a row there, and
// every row names a key the decoder accepts.
func TestReferenceListsEveryKey(t *testing.T) {
	for _, p := range referenceProblems(acceptedKeys(t), referenceRows(t, referenceFile)) {
		t.Error(p)
	}
}

// TestReferenceCheckFailsBothWays: a row taken out of the reference, and a
// row for a key the decoder lacks, are each reported by name.
func TestReferenceCheckFailsBothWays(t *testing.T) {
	rows := referenceRows(t, referenceFile)
	const gone, made = "profiles.<name>.upstreams.<name>.timeout", "profiles.<name>.upstreams.<name>.no_such_key"
	i := slices.IndexFunc(rows, func(r referenceRow) bool { return r.key == gone })
	if i < 0 {
		t.Fatalf("docs/reference.md: no row parsed as `%s` among %d rows", gone, len(rows))
	}
	rows = append(slices.Delete(slices.Clone(rows), i, i+1), referenceRow{key: made, line: 999})
	got := referenceProblems(acceptedKeys(t), rows)
	if len(got) != 2 || !strings.Contains(got[0], made) || !strings.Contains(got[1], gone) {
		t.Errorf("got %q, want one problem naming %s, then one naming %s", got, made, gone)
	}
}

// referenceProblems says what the reference lacks and what it has too many.
func referenceProblems(keys map[string]bool, rows []referenceRow) []string {
	var out []string
	documented := map[string]bool{}
	for _, r := range rows {
		documented[r.key] = true
		if _, ok := keys[r.key]; !ok {
			out = append(out, fmt.Sprintf("docs/reference.md:%d: `%s` is not a key profiles.yaml accepts (rawConfig in decode.go, or the setters of routing/fuse/config.go): fix or remove the row", r.line, r.key))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if keys[k] && !documented[k] {
			out = append(out, fmt.Sprintf("docs/reference.md has no row for `%s`: add one to the table of %s", k, tableFor(k)))
		}
	}
	return out
}

// acceptedKeys returns every key path profiles.yaml accepts, true for a leaf
// (a value or a list of values, or a mapping whose keys are free, like env),
// false for a section that holds keys. A mapping of names to sections
// (profiles, upstreams) is <name>, a list of sections is [].
func acceptedKeys(t *testing.T) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	walkKeys(t, reflect.TypeFor[rawConfig](), "", keys)
	return keys
}

// consumers are the sections the decoder hands on unchecked (an interface
// value in rawConfig), with where their keys are decided.
var consumers = map[string]func(t *testing.T) []string{
	"profiles.<name>.routing.fuse": fuseKeys,
}

func walkKeys(t *testing.T, typ reflect.Type, path string, keys map[string]bool) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	section := func(child reflect.Type, childPath string) {
		keys[path] = false
		walkKeys(t, child, childPath, keys)
	}
	switch om, isOrdered := reflect.Zero(typ).Interface().(orderedMap); {
	case isOrdered:
		section(om.valueType(), path+".<name>")
	case reflect.PointerTo(typ).Implements(unmarshalerType):
		keys[path] = true
	case typ.Kind() == reflect.Struct:
		if path != "" {
			keys[path] = false
		}
		for name, f := range yamlFields(typ) {
			walkKeys(t, f.Type, join(path, name), keys)
		}
	case typ.Kind() == reflect.Map && typ.Elem().Kind() == reflect.Interface:
		keysOf, ok := consumers[path]
		if !ok {
			t.Fatalf("%s: the decoder passes this mapping on unchecked; add to consumers where its keys are decided", path)
		}
		keys[path] = false
		for _, k := range keysOf(t) {
			keys[path+"."+k] = true
		}
	case (typ.Kind() == reflect.Map || typ.Kind() == reflect.Slice) && holdsSections(typ.Elem()):
		sep := ".<name>"
		if typ.Kind() == reflect.Slice {
			sep = "[]"
		}
		section(typ.Elem(), path+sep)
	default:
		keys[path] = true
	}
}

// holdsSections reports whether a value of t is a mapping of keys the
// decoder checks (a struct it walks), not a single value.
func holdsSections(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(unmarshalerType)
}

// fuseKeys reads the keys of routing/fuse's setters table, the only keys
// fuse.PolicyFromMap accepts.
func fuseKeys(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), fuseSource, nil, 0)
	if err != nil {
		t.Fatalf("reading the routing.fuse keys: %v", err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "setters" || len(vs.Values) != 1 {
			return true
		}
		for _, elt := range vs.Values[0].(*ast.CompositeLit).Elts {
			if lit, ok := elt.(*ast.KeyValueExpr).Key.(*ast.BasicLit); ok {
				k, _ := strconv.Unquote(lit.Value)
				out = append(out, k)
			}
		}
		return false
	})
	if len(out) == 0 {
		t.Fatalf("%s: found no setters table; this test reads the routing.fuse keys from it", fuseSource)
	}
	return out
}

type referenceRow struct {
	key  string
	line int
}

var (
	// A table whose rows are keys: "| key | ..." or "| key under `prefix` | ...".
	keyHeader   = regexp.MustCompile("^\\|\\s*key(?: under `([^`]+)`)?\\s*\\|")
	keyCell     = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")
	tableRow    = regexp.MustCompile(`^\|`)
	ruleRow     = regexp.MustCompile(`^\|[\s:|-]+\|$`)
	placeholder = regexp.MustCompile(`<[^>]*>`)
)

// referenceRows reads the keys of every key table of the reference: each
// row's first cell is one key in backticks, under the prefix its table's
// header names; <profile>, <upstream> and the like stand for any name.
func referenceRows(t *testing.T, file string) []referenceRow {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []referenceRow
	prefix, inTable := "", false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch m := keyHeader.FindStringSubmatch(line); {
		case m != nil:
			prefix, inTable = m[1], true
		case !tableRow.MatchString(line):
			inTable = false
		case inTable && !ruleRow.MatchString(line):
			c := keyCell.FindStringSubmatch(line)
			if c == nil {
				t.Errorf("%s:%d: a row of a key table must start with one key in backticks: %s", file, n, line)
				continue
			}
			rows = append(rows, referenceRow{key: placeholder.ReplaceAllString(join(prefix, c[1]), "<name>"), line: n})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// tableFor names the table a missing key belongs in: its section's prefix.
func tableFor(key string) string {
	if i := strings.LastIndex(key, "."); i > 0 {
		return "`" + key[:i] + "`"
	}
	return "the top-level keys"
}
