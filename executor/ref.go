package executor

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The reference syntax.
const (
	refOpen    = "$<<"
	refClose   = ">>"
	refEscaped = "$$<<"
	// The seeds' syntax ${{var}}, which is not ours: written around a
	// reference it is refused with a pointer to $<<var>>, never passed on
	// literally; "$${{" is a literal "${{".
	seedOpen    = "${{"
	seedClose   = "}}"
	seedEscaped = "$${{"
	refKey      = "$ref"
	refPathKey  = "path"

	// Names available in the arguments of a foreach step.
	itemName  = "item"
	indexName = "index"
)

// ref is one reference: a step id (or item/index in a foreach step) and a
// path into its value.
type ref struct {
	step string
	path []string
	src  string // as written, for messages
}

// part is a piece of a string: literal text, or a reference when ref is set.
type part struct {
	text string
	ref  *ref
}

// parseText splits s into literal text and references, turning "$$<<" into
// a literal "$<<" and "$${{" into a literal "${{". Literal text comes back
// merged, so a string without references is one part.
func parseText(s string) ([]part, error) {
	var parts []part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, part{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '$')
		if j < 0 {
			lit.WriteString(s[i:])
			break
		}
		lit.WriteString(s[i : i+j])
		i += j
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, refEscaped):
			lit.WriteString(refOpen)
			i += len(refEscaped)
		case strings.HasPrefix(rest, seedEscaped):
			lit.WriteString(seedOpen)
			i += len(seedEscaped)
		case strings.HasPrefix(rest, seedOpen):
			if err := seedRef(rest); err != nil {
				return nil, err
			}
			lit.WriteByte('$')
			i++
		case strings.HasPrefix(rest, refOpen):
			end := strings.Index(rest[len(refOpen):], refClose)
			if end < 0 { // never closed: literal
				lit.WriteString(refOpen)
				i += len(refOpen)
				continue
			}
			src := rest[:len(refOpen)+end+len(refClose)]
			r, err := parseRef(rest[len(refOpen) : len(refOpen)+end])
			if err != nil {
				return nil, fmt.Errorf("%q is not a reference: %v (write $$<< for a literal $<<)", src, err)
			}
			r.src = src
			flush()
			parts = append(parts, part{ref: r})
			i += len(src)
		default:
			lit.WriteByte('$')
			i++
		}
	}
	flush()
	return parts, nil
}

// seedRef refuses the seeds' ${{var}} at the start of s when its inside
// is a step id with an optional path, written tight as the seeds write it.
// "${{ github.sha }}" (a GitHub Actions expression, spaced) stays literal
// text, and so does an unclosed "${{".
func seedRef(s string) error {
	end := strings.Index(s[len(seedOpen):], seedClose)
	if end < 0 {
		return nil
	}
	body := s[len(seedOpen) : len(seedOpen)+end]
	if _, err := parseRef(body); err != nil {
		return nil
	}
	return fmt.Errorf("%q is not this gateway's reference syntax: write \"$<<%s>>\" for the value of step %q (or \"$${{\" for a literal \"${{\")",
		s[:len(seedOpen)+end+len(seedClose)], body, strings.SplitN(body, ".", 2)[0])
}

// parseRef reads "id" or "id.seg.seg" (the inside of $<<...>>).
func parseRef(body string) (*ref, error) {
	segs := strings.Split(body, ".")
	if !validID(segs[0]) {
		return nil, fmt.Errorf("%q is not a step id", segs[0])
	}
	for _, s := range segs[1:] {
		if s == "" {
			return nil, errors.New("empty path segment")
		}
	}
	return &ref{step: segs[0], path: segs[1:]}, nil
}

// validID reports whether s is a valid step id.
var validID = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).MatchString

// References are the step ids that the references in v name (v as
// encoding/json decodes it): in strings and {"$ref": id} objects, never in
// object keys. A malformed reference names none.
func References(v any) []string {
	var ids []string
	c := compiler{onRef: func(_ []string, r *ref, _ bool) { ids = append(ids, r.step) }, onErr: func([]string, error) {}}
	c.compile(v, nil)
	return ids
}

// refObject reads {"$ref": "id", "path": "/pointer"}; ok is false when m is
// not such an object, in which case it is literal.
func refObject(m map[string]any) (r *ref, ok bool, err error) {
	id, isString := m[refKey].(string)
	if !isString || !validID(id) || len(m) > 2 {
		return nil, false, nil
	}
	r = &ref{step: id, src: fmt.Sprintf(`{"$ref": %q}`, id)}
	if len(m) == 1 {
		return r, true, nil
	}
	ptr, isString := m[refPathKey].(string)
	if !isString {
		return nil, false, nil
	}
	r.src = fmt.Sprintf(`{"$ref": %q, "path": %q}`, id, ptr)
	if r.path, err = parsePointer(ptr); err != nil {
		return nil, true, fmt.Errorf("%s: %w", r.src, err)
	}
	return r, true, nil
}

// parsePointer splits an RFC 6901 JSON pointer into unescaped tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("JSON pointer %q does not start with /", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		if !strings.Contains(t, "~") {
			continue
		}
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf("JSON pointer %q: ~ must be followed by 0 or 1", p)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

type tmplKind uint8

const (
	tLiteral tmplKind = iota // lit, with no reference inside
	tObject                  // keys[i]: elems[i]
	tArray                   // elems
	tText                    // parts, at least one of them a reference
	tRef                     // ref, the whole value
)

// tmpl is a compiled argument value: literal where it can be, and the
// references to fill in where it cannot. Evaluating it is the one pass of
// substitution: values put in are never looked at again.
type tmpl struct {
	kind  tmplKind
	lit   any
	keys  []string
	elems []*tmpl
	parts []part
	ref   *ref
	loc   string // where in the plan, for errors: args.query
}

// compiler turns JSON values into templates, reporting every reference it
// meets (onRef) and every malformed one (onErr).
type compiler struct {
	onRef func(loc []string, r *ref, inText bool)
	onErr func(loc []string, err error)
}

// compile compiles v, found at loc. v must be a JSON value as
// encoding/json decodes it.
func (c *compiler) compile(v any, loc []string) *tmpl {
	switch v := v.(type) {
	case string:
		return c.text(v, loc)
	case map[string]any:
		if r, ok, err := refObject(v); ok {
			return c.whole(r, err, loc)
		}
		t := &tmpl{kind: tObject, keys: sortedKeys(v)}
		for _, k := range t.keys {
			t.elems = append(t.elems, c.compile(v[k], append(loc[:len(loc):len(loc)], k)))
		}
		return t.collapse()
	case []any:
		t := &tmpl{kind: tArray}
		for i, e := range v {
			t.elems = append(t.elems, c.compile(e, append(loc[:len(loc):len(loc)], strconv.Itoa(i))))
		}
		return t.collapse()
	default:
		return &tmpl{kind: tLiteral, lit: v}
	}
}

func (c *compiler) text(s string, loc []string) *tmpl {
	parts, err := parseText(s)
	if err != nil {
		c.onErr(loc, err)
		return &tmpl{kind: tLiteral, lit: s}
	}
	switch {
	case len(parts) == 0:
		return &tmpl{kind: tLiteral, lit: ""}
	case len(parts) == 1 && parts[0].ref == nil:
		return &tmpl{kind: tLiteral, lit: parts[0].text}
	case len(parts) == 1:
		return c.whole(parts[0].ref, nil, loc)
	}
	for _, p := range parts {
		if p.ref != nil {
			c.onRef(loc, p.ref, true)
		}
	}
	return &tmpl{kind: tText, parts: parts, loc: formatLoc(loc)}
}

func (c *compiler) whole(r *ref, err error, loc []string) *tmpl {
	if err != nil {
		c.onErr(loc, err)
		return &tmpl{kind: tLiteral}
	}
	c.onRef(loc, r, false)
	return &tmpl{kind: tRef, ref: r, loc: formatLoc(loc)}
}

// collapse turns an object or array without references into a literal.
func (t *tmpl) collapse() *tmpl {
	for _, e := range t.elems {
		if e.kind != tLiteral {
			return t
		}
	}
	lit, _ := t.eval(nil, nil, nil) // literals only: nothing to resolve
	return &tmpl{kind: tLiteral, lit: lit}
}

// resolver gives the value of a reference.
type resolver func(r *ref) (any, error)

// eval builds the value of t. When lenient is set, a reference that cannot
// be resolved makes its value null and is reported there instead of failing.
// The strings interpolation builds are bounded by tb (nil: unbounded).
func (t *tmpl) eval(resolve resolver, lenient func(error), tb *textBudget) (any, error) {
	switch t.kind {
	case tObject:
		m := make(map[string]any, len(t.keys))
		for i, k := range t.keys {
			v, err := t.elems[i].eval(resolve, lenient, tb)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return m, nil
	case tArray:
		a := make([]any, len(t.elems))
		for i, e := range t.elems {
			v, err := e.eval(resolve, lenient, tb)
			if err != nil {
				return nil, err
			}
			a[i] = v
		}
		return a, nil
	case tText, tRef:
		v, err := t.evalRefs(resolve, tb)
		if err != nil && lenient != nil {
			lenient(err)
			return nil, nil
		}
		return v, err
	default:
		return t.lit, nil
	}
}

func (t *tmpl) evalRefs(resolve resolver, tb *textBudget) (any, error) {
	if t.kind == tRef {
		v, err := resolve(t.ref)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", t.loc, t.ref.src, err)
		}
		return v, nil
	}
	var b strings.Builder
	for _, p := range t.parts {
		text := p.text
		if p.ref != nil {
			v, err := resolve(p.ref)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", t.loc, p.ref.src, err)
			}
			text = toText(v)
		}
		if !tb.fits(b.Len() + len(text)) {
			return nil, fmt.Errorf("%s: %w", t.loc, tb.take(b.Len()+len(text)))
		}
		b.WriteString(text)
	}
	if err := tb.take(b.Len()); err != nil {
		return nil, fmt.Errorf("%s: %w", t.loc, err)
	}
	return b.String(), nil
}

// formatLoc writes a location as args.items[0].name, quoting keys that are
// not plain names: args["a.b"].
func formatLoc(loc []string) string {
	var b strings.Builder
	for i, tok := range loc {
		switch {
		case i == 0:
			b.WriteString(tok)
		case isIndex(tok):
			fmt.Fprintf(&b, "[%s]", tok)
		case validID(tok):
			b.WriteString("." + tok)
		default:
			fmt.Fprintf(&b, "[%q]", tok)
		}
	}
	return b.String()
}
