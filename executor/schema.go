package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaCacheSize bounds the cache; a catalog that changes often only costs
// recompiling.
const schemaCacheSize = 1024

// schemaCache keeps tool schemas parsed and compiled, keyed by their text,
// so that a catalog change never serves a stale schema.
type schemaCache struct {
	mu      sync.Mutex
	entries map[string]*toolSchema
}

// toolSchema is one JSON Schema: its document, for walking paths, and its
// compiled form, for validating (nil when it would not compile: then the
// tool alone judges its arguments).
type toolSchema struct {
	doc      any
	compiled *jsonschema.Schema
}

// get parses and compiles raw, or returns nil when there is no schema or
// it is not JSON.
func (c *schemaCache) get(raw json.RawMessage) *toolSchema {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.entries[string(raw)]; ok {
		return s
	}
	if c.entries == nil || len(c.entries) >= schemaCacheSize {
		c.entries = make(map[string]*toolSchema)
	}
	s := compileSchema(raw)
	c.entries[string(raw)] = s
	return s
}

func compileSchema(raw json.RawMessage) *toolSchema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	const url = "tool-schema.json"
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	s := &toolSchema{doc: doc}
	if c.AddResource(url, doc) == nil {
		s.compiled, _ = c.Compile(url)
	}
	return s
}

// noLoader refuses every external $ref: schemas come from upstream servers
// and must not make the gateway read files or reach the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %s not loaded", url)
}

var printer = message.NewPrinter(language.English)

// argProblem is a schema violation at path (args.x).
type argProblem struct{ path, msg string }

// check validates v against the schema. holes are the locations of
// references (placeholders in v): errors a real value there could change
// are dropped.
func (s *toolSchema) check(v any, holes [][]string) []argProblem {
	if s == nil || s.compiled == nil {
		return nil
	}
	err := s.compiled.Validate(v)
	var verr *jsonschema.ValidationError
	if err == nil || !errors.As(err, &verr) {
		return nil
	}
	var out []argProblem
	for _, e := range surviving(verr, holes) {
		out = append(out, argProblem{path: formatLoc(append([]string{"args"}, e.InstanceLocation...)), msg: e.ErrorKind.LocalizedString(printer)})
	}
	return out
}

// surviving returns the errors of e that hold whatever values the holes
// get: conjunctions are opened; an error at or below a hole is dropped; above
// a hole only structural errors (type, required, counts, names) stay.
func surviving(e *jsonschema.ValidationError, holes [][]string) []*jsonschema.ValidationError {
	under, above := relate(e.InstanceLocation, holes)
	if under {
		return nil
	}
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		var out []*jsonschema.ValidationError
		for _, c := range e.Causes {
			out = append(out, surviving(c, holes)...)
		}
		return out
	case *kind.Type, *kind.Required, *kind.MinProperties, *kind.MaxProperties, *kind.MinItems, *kind.MaxItems,
		*kind.AdditionalProperties, *kind.PropertyNames, *kind.DependentRequired, *kind.Dependency:
	default:
		if above {
			return nil
		}
	}
	return []*jsonschema.ValidationError{e}
}

// relate says whether loc is at or below some hole, or strictly above one.
func relate(loc []string, holes [][]string) (under, above bool) {
	for _, h := range holes {
		switch {
		case len(loc) >= len(h) && slices.Equal(loc[:len(h)], h):
			return true, false
		case len(loc) < len(h) && slices.Equal(h[:len(loc)], loc):
			above = true
		}
	}
	return false, above
}

// schemaAt follows path through a schema document. It returns the
// subschema there, nil when it cannot tell (combinators, $ref, no
// schema), or an error when no value could have that path.
func schemaAt(doc any, path []string) (any, error) {
	for i, tok := range path {
		s, ok := doc.(map[string]any)
		if !ok || opaque(s) {
			return nil, nil
		}
		next, err := schemaStep(s, tok)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", pathPrefix(path, i), err)
		}
		doc = next
	}
	return doc, nil
}

// opaque reports schemas whose shape this walk does not follow.
func opaque(s map[string]any) bool {
	for _, k := range []string{"$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "patternProperties", "prefixItems", "unevaluatedProperties"} {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}

// schemaStep takes one path step inside s.
func schemaStep(s map[string]any, tok string) (any, error) {
	types := schemaTypes(s)
	canObject := len(types) == 0 || slices.Contains(types, "object")
	canArray := len(types) == 0 || slices.Contains(types, "array")
	if !canObject && !canArray {
		return nil, fmt.Errorf("cannot take %q of %s", tok, strings.Join(types, " or "))
	}
	var objSub, arrSub any
	var objErr, arrErr error
	if canObject {
		objSub, objErr = propertySchema(s, tok)
	}
	if canArray {
		if isIndex(tok) {
			arrSub = s["items"]
		} else {
			arrErr = fmt.Errorf("%q is not an array index", tok)
		}
	}
	switch {
	case canObject && canArray && (objErr == nil) != (arrErr == nil):
		return nil, nil // either may hold: cannot tell which
	case canObject && canArray:
		return nil, errors.Join(objErr, arrErr)
	case canObject:
		return objSub, objErr
	default:
		return arrSub, arrErr
	}
}

func propertySchema(s map[string]any, tok string) (any, error) {
	props, _ := s["properties"].(map[string]any)
	if sub, ok := props[tok]; ok {
		return sub, nil
	}
	switch ap := s["additionalProperties"].(type) {
	case bool:
		if !ap && len(props) == 0 {
			return nil, fmt.Errorf("no property %q (the schema allows none)", tok)
		}
		if !ap {
			return nil, fmt.Errorf("no property %q (the schema allows %s)", tok, strings.Join(sortedKeys(props), ", "))
		}
	case map[string]any:
		return ap, nil
	}
	return nil, nil
}

// schemaTypes is a schema's "type" as a list; empty when not stated.
func schemaTypes(doc any) []string {
	s, ok := doc.(map[string]any)
	if !ok || opaque(s) {
		return nil
	}
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// typesMeet reports whether a value of one of the types have may be one of
// want; unknown (empty) lists meet anything.
func typesMeet(have, want []string) bool {
	if len(have) == 0 || len(want) == 0 {
		return true
	}
	for _, h := range have {
		for _, w := range want {
			if h == w || h == "integer" && w == "number" || h == "number" && w == "integer" {
				return true
			}
		}
	}
	return false
}
