package integrity

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// Contract is a tool's contract decoded once for everything a gateway
// reads of it as it vets the tool.
type Contract struct {
	// Hash is the hex SHA-256 of the canonical JSON of the contract: name
	// (the upstream's own), title, description, schemas and annotations,
	// not _meta. Key order, white space, number spelling, and whether a
	// schema is raw or typed do not change it.
	Hash string
	// Identifiers are the words of the tool's prose that could name a
	// tool (with a separator, or camelCase), in order, joined by spaces;
	// see [ToolNames.MentionsIn].
	Identifiers string
	canonical   []byte // the canonical JSON, for a pin's Text
	in, out     any    // the schemas, decoded
}

// ContractOf decodes t's contract.
func ContractOf(t mcp.Tool) Contract {
	doc := contractDoc(t)
	b := encodeContract(doc)
	sum := sha256.Sum256(b)
	in, out := doc["inputSchema"], doc["outputSchema"]
	return Contract{Hash: hex.EncodeToString(sum[:]), Identifiers: identifiersOf(t, in, out), canonical: b, in: in, out: out}
}

// Scan is [Scan] of the tool t whose contract c is, with the other
// servers' tool names behind a lookup rather than in a list.
func (c Contract) Scan(t mcp.Tool, named Named) []Finding {
	return scanDecoded(t, c.in, c.out, len(c.canonical), shadowNames{named: named, self: t.Name})
}

// contractJSON is the canonical JSON of the hashed contract.
func contractJSON(t mcp.Tool) []byte { return encodeContract(contractDoc(t)) }

// contractDoc is the hashed contract as plain JSON values.
func contractDoc(t mcp.Tool) map[string]any {
	doc := map[string]any{
		"name":        t.Name,
		"title":       t.Title,
		"description": t.Description,
		"inputSchema": schemaValue(t.RawInputSchema, mcp.ToolArgumentsSchema(t.InputSchema)),
		"annotations": canonicalValue(t.Annotations),
	}
	if out := schemaValue(t.RawOutputSchema, mcp.ToolArgumentsSchema(t.OutputSchema)); out != nil {
		doc["outputSchema"] = out
	}
	return doc
}

func encodeContract(doc map[string]any) []byte {
	b, err := marshalJSON(doc)
	if err != nil { // every value in doc is a decoded JSON value, which always encodes
		panic("integrity: encoding canonical contract: " + err.Error())
	}
	return b
}

// schemaValue is the canonical form of a schema given raw (which wins, as
// in mcp-go's encoding) or typed; nil means none.
func schemaValue(raw json.RawMessage, typed mcp.ToolArgumentsSchema) any {
	if raw != nil {
		v, err := canonicalJSON(raw)
		if err != nil {
			// Keep invalid bytes distinguishable rather than failing.
			return map[string]any{"$invalidJSON": string(raw)}
		}
		return dropEmptyDefaults(v)
	}
	if typed.Type == "" && typed.Properties == nil && typed.Defs == nil &&
		len(typed.Required) == 0 && typed.AdditionalProperties == nil {
		return nil
	}
	return dropEmptyDefaults(canonicalValue(typed))
}

// dropEmptyDefaults removes an empty top-level "properties" or "required",
// which mcp-go adds when it encodes a typed schema.
func dropEmptyDefaults(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if p, ok := m["properties"].(map[string]any); ok && len(p) == 0 {
		delete(m, "properties")
	}
	if r, ok := m["required"].([]any); ok && len(r) == 0 {
		delete(m, "required")
	}
	return m
}

// canonicalValue is v as plain JSON values, or its encoding error's text.
func canonicalValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"$unencodable": err.Error()}
	}
	out, err := canonicalJSON(b)
	if err != nil {
		return map[string]any{"$unencodable": err.Error()}
	}
	return out
}

// canonicalJSON decodes b into maps, slices, strings, bools and canonical
// numbers; encoding/json then writes map keys sorted.
func canonicalJSON(b []byte) (any, error) {
	v, ok := decodeJSON(b)
	if !ok || !json.Valid(b) {
		return nil, errInvalidJSON
	}
	return normaliseNumbers(v), nil
}

var errInvalidJSON = errors.New("invalid JSON")

func normaliseNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		return canonicalNumber(v)
	case map[string]any:
		for k, e := range v {
			v[k] = normaliseNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normaliseNumbers(e)
		}
	}
	return v
}

// canonicalNumber spells integers that fit in int64 in decimal, others as
// the shortest float64 form.
func canonicalNumber(n json.Number) json.Number {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return json.Number(strconv.FormatInt(i, 10))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return n // out of float64 range: keep the upstream's spelling
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// MaxContractText bounds [Contract.Text].
const MaxContractText = 16 << 10

// Text is the contract as indented JSON, so two versions diff line by
// line; cut at MaxContractText bytes with a line saying so.
func (c Contract) Text() string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, c.canonical, "", "  "); err != nil {
		panic("integrity: indenting canonical contract: " + err.Error()) // contractJSON is valid JSON
	}
	if buf.Len() <= MaxContractText {
		return buf.String()
	}
	b := buf.Bytes()[:MaxContractText]
	if i := bytes.LastIndexByte(b, '\n'); i > 0 {
		b = b[:i]
	}
	return string(b) + "\n… (cut at 16 KiB)"
}

// TrustedAnnotations is what the gateway may believe of t's annotations:
// the title, and every hint at its conservative value (not read-only,
// destructive, not idempotent, open world), whatever the upstream claims.
func TrustedAnnotations(t mcp.Tool) mcp.ToolAnnotation {
	return mcp.ToolAnnotation{
		Title:           t.Annotations.Title,
		ReadOnlyHint:    mcp.ToBoolPtr(false),
		DestructiveHint: mcp.ToBoolPtr(true),
		IdempotentHint:  mcp.ToBoolPtr(false),
		OpenWorldHint:   mcp.ToBoolPtr(true),
	}
}

// AnnotationTrust is what the router's configuration lets it believe of
// one upstream's tool annotations.
type AnnotationTrust struct {
	// All believes every hint the upstream sends (trust_annotations; the
	// built-in servers are always trusted).
	All bool
	// ReadOnly are upstream tool names (their own, unprefixed) that the
	// configuration vouches for as read-only (read_only_tools).
	ReadOnly []string
}

// Annotations are t's annotations as the gateway shows and uses them: the
// upstream's with All, else [TrustedAnnotations]; a tool in ReadOnly is
// then marked read-only, not destructive and idempotent.
func (a AnnotationTrust) Annotations(t mcp.Tool) mcp.ToolAnnotation {
	out := TrustedAnnotations(t)
	if a.All {
		out = t.Annotations
	}
	if slices.Contains(a.ReadOnly, t.Name) {
		out.ReadOnlyHint = mcp.ToBoolPtr(true)
		out.DestructiveHint = mcp.ToBoolPtr(false)
		out.IdempotentHint = mcp.ToBoolPtr(true)
	}
	return out
}
