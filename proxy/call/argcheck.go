package call

// Argument validation against a tool's inputSchema (BI-07), for upstreams
// with validate_arguments; otherwise the upstream judges its own arguments.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxArgViolations bounds the violations named in one refusal.
const maxArgViolations = 5

// maxViolationLen bounds one violation's text (it may quote values).
const maxViolationLen = 200

// schemaSeed keys the hashes of schema texts (compared in process only).
var schemaSeed = maphash.MakeSeed()

var violationPrinter = message.NewPrinter(language.English)

// ErrInvalidArguments is wrapped with the violations of a call's arguments.
var ErrInvalidArguments = errors.New("the arguments do not match the tool's input schema")

// Schemas is what the argument check asks of the catalog.
type Schemas interface {
	// InputSchema is c's tool's input schema when its upstream asks for
	// arguments to be checked (nil otherwise), and the catalog it is from.
	InputSchema(c *Call) (schema json.RawMessage, catalog Catalog)
}

// Catalog is a catalog as the argument check sees it, compared with ==:
// the same value while the catalog does not change.
type Catalog interface {
	Has(tool string) bool
}

// ArgCheck is the stage that refuses a call whose arguments do not fit
// its tool's input schema (BI-07). It caches compiled schemas by tool,
// recompiled when the schema text changes and dropped when the tool
// leaves the catalog.
type ArgCheck struct {
	schemas Schemas
	logger  *slog.Logger
	cache   sync.Map     // exposed name -> *argSchema
	bounded atomic.Value // boundTo: the catalog cache was last bounded to
}

// boundTo holds a Catalog in an atomic.Value, which wants one concrete type.
type boundTo struct{ Catalog }

// NewArgCheck checks calls against schemas; a schema that does not
// compile is logged once (nil logger: silence).
func NewArgCheck(schemas Schemas, logger *slog.Logger) *ArgCheck {
	logger = cmp.Or(logger, slog.New(slog.DiscardHandler))
	return &ArgCheck{schemas: schemas, logger: logger}
}

type argSchema struct {
	sum      uint64             // hash of the schema text
	compiled *jsonschema.Schema // nil when the schema does not compile: calls pass
}

// Stage refuses, with KindInvalidArguments, a call whose arguments violate
// its tool's input schema. An uncompilable schema or unreadable arguments
// let the call pass.
func (a *ArgCheck) Stage(ctx context.Context, c *Call, next Handler) (*mcp.CallToolResult, error) {
	raw, cat := a.schemas.InputSchema(c)
	if len(raw) == 0 {
		return next(ctx, c)
	}
	a.bound(cat)
	if s := a.schema(c, raw); s.compiled != nil {
		if v, ok := argInstance(c.Args); ok {
			if found := violations(s.compiled.Validate(v)); len(found) > 0 {
				return nil, &Error{Kind: KindInvalidArguments, Upstream: c.Upstream, Tool: c.Tool,
					Err: fmt.Errorf("%w: %s", ErrInvalidArguments, strings.Join(found, "; "))}
			}
		}
	}
	return next(ctx, c)
}

// bound drops the entries of tools that are not in cat, once per catalog.
func (a *ArgCheck) bound(cat Catalog) {
	prev := a.bounded.Load() // nil before the first bound
	if old, _ := prev.(boundTo); prev != nil && old.Catalog == cat || !a.bounded.CompareAndSwap(prev, boundTo{cat}) {
		return
	}
	a.cache.Range(func(k, _ any) bool {
		if !cat.Has(k.(string)) {
			a.cache.Delete(k)
		}
		return true
	})
}

// schema returns the compiled schema raw of c's tool, compiling it when new or changed.
func (a *ArgCheck) schema(c *Call, raw json.RawMessage) *argSchema {
	sum := maphash.Bytes(schemaSeed, raw)
	prev, ok := a.cache.Load(c.Tool)
	if ok && prev.(*argSchema).sum == sum {
		return prev.(*argSchema)
	}
	s, err := compileInputSchema(raw)
	s.sum = sum
	if ok {
		if !a.cache.CompareAndSwap(c.Tool, prev, s) {
			return s // another call stored one first; this one is as good
		}
	} else if _, loaded := a.cache.LoadOrStore(c.Tool, s); loaded {
		return s
	}
	if err != nil { // logged by the call that stored it: once per schema
		a.logger.Warn("tool input schema does not compile: its calls are passed through unchecked",
			"tool", c.Tool, "upstream", c.Upstream, "err", err)
	}
	return s
}

// compileInputSchema always returns an entry; its compiled schema is nil,
// with the error, when raw is not a schema.
func compileInputSchema(raw json.RawMessage) (*argSchema, error) {
	s := &argSchema{}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return s, err
	}
	const url = "urn:mcp-router:input-schema"
	comp := jsonschema.NewCompiler()
	comp.UseLoader(refusingLoader{})
	if err := comp.AddResource(url, doc); err != nil {
		return s, err
	}
	s.compiled, err = comp.Compile(url)
	return s, err
}

// refusingLoader refuses every external $ref: upstream schemas must not
// make the gateway read files or reach the network.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %s not loaded", url)
}

// argInstance turns call arguments into the values the validator reads;
// no arguments are an empty object. ok is false for unreadable arguments.
func argInstance(args any) (v any, ok bool) {
	switch a := args.(type) {
	case nil:
		return map[string]any{}, true
	case json.RawMessage:
		return rawInstance(a)
	case []byte:
		return rawInstance(a)
	}
	if plainJSON(args) {
		return args, true
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, false
	}
	return rawInstance(b)
}

func rawInstance(raw []byte) (any, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, true
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, false
	}
	if v == nil {
		return map[string]any{}, true // "arguments": null
	}
	return v, true
}

// plainJSON reports whether v holds only the types the validator reads.
func plainJSON(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, json.Number, float64, float32,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// violations lists a validation error's leaf violations as "pointer:
// message", sorted, at most maxArgViolations (and how many more).
func violations(err error) []string {
	var verr *jsonschema.ValidationError
	if err == nil || !errors.As(err, &verr) {
		return nil
	}
	var leaves []string
	for _, e := range leafErrors(verr, nil) {
		msg := pointer(e.InstanceLocation) + ": " + e.ErrorKind.LocalizedString(violationPrinter)
		leaves = append(leaves, clip.Ellipsis(msg, maxViolationLen))
	}
	slices.Sort(leaves)
	leaves = slices.Compact(leaves)
	if len(leaves) > maxArgViolations {
		more := len(leaves) - maxArgViolations
		leaves = append(leaves[:maxArgViolations], fmt.Sprintf("and %d more", more))
	}
	return leaves
}

func leafErrors(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				out = leafErrors(c, out)
			}
			return out
		}
	}
	return append(out, e)
}

// pointerEscaper escapes a JSON pointer token (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer renders an instance location as a JSON pointer, "(root)" for none.
func pointer(loc []string) string {
	if len(loc) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(tok))
	}
	return b.String()
}
