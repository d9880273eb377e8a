package metatools

// What request_more_tools shows of a tool beside its score is read from
// its definition alone, so it is kept per tool: a signature parses the
// input schema, and encoding the answer compacted every schema again.

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/routing"
)

// maxLines bounds the tools whose lines are kept (a line holds its
// tool's encoded schema, a few KiB); past it they are dropped and read
// again. The searches of a day reach far fewer tools than a catalog holds.
const maxLines = 1024

// toolLine is what request_more_tools shows of one tool, and the parts of
// its definition it was read from.
type toolLine struct {
	upstream, domain  string
	schema            json.RawMessage
	description       string
	server            string
	signature         string
	sentence, aboutIt string // first sentence of the description; ": <server description>" or ""
	// The tool's JSON in structuredContent around its score and the
	// fields that vary by call (nil when json.Marshal refused a part):
	// {"name":..,"upstream":..,"domain":..,"score": and
	// ,"description":..,"input_schema":..,"signature":.. and
	// ,"server_description":.. (empty without one).
	head, body, serverJSON []byte
}

// lines keeps the toolLine of each tool shown, by exposed name.
type lines struct {
	mu sync.Mutex
	m  map[string]*toolLine
}

// of is the line of candidate c, whose catalog tool is tool, read again
// when any part of it changed since it was kept.
func (l *lines) of(c routing.Candidate, tool Tool) *toolLine {
	schema, description := tool.Def.RawInputSchema, tool.Def.Description
	l.mu.Lock()
	tl := l.m[c.Name]
	l.mu.Unlock()
	if tl != nil && tl.upstream == c.Upstream && tl.domain == c.Domain && tl.description == description &&
		tl.server == tool.Server && bytes.Equal(tl.schema, schema) {
		return tl
	}
	tl = newToolLine(c, schema, description, tool.Server)
	l.mu.Lock()
	if l.m == nil || len(l.m) >= maxLines {
		l.m = map[string]*toolLine{}
	}
	l.m[c.Name] = tl
	l.mu.Unlock()
	return tl
}

func newToolLine(c routing.Candidate, schema json.RawMessage, description, server string) *toolLine {
	tl := &toolLine{upstream: c.Upstream, domain: c.Domain, schema: schema, description: description, server: server,
		signature: toolSignature(c.Name, schema), sentence: firstSentence(description),
		aboutIt: aboutServer(clip.Ellipsis(server, maxSignatureServer))}
	head, err1 := json.Marshal(struct {
		Name     string `json:"name"`
		Upstream string `json:"upstream"`
		Domain   string `json:"domain"`
	}{c.Name, c.Upstream, c.Domain})
	body, err2 := json.Marshal(struct {
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
		Signature   string          `json:"signature"`
	}{description, schema, tl.signature})
	about, err3 := json.Marshal(struct {
		Server string `json:"server_description,omitempty"`
	}{server})
	if err1 != nil || err2 != nil || err3 != nil {
		return tl
	}
	tl.head = append(head[:len(head)-1], `,"score":`...)
	tl.body = append([]byte{','}, body[1:len(body)-1]...)
	if len(about) > 2 {
		tl.serverJSON = append([]byte{','}, about[1:len(about)-1]...)
	}
	return tl
}

// routedTools are the tools of request_more_tools' structuredContent.
type routedTools []routedTool

// AppendJSON appends ts to dst as json.Marshal writes them, from the JSON
// kept with each tool's line; false when a tool has none or its score is
// no JSON number, for the caller to use json.Marshal.
func (ts routedTools) AppendJSON(dst []byte) ([]byte, bool) {
	n := 2
	for _, t := range ts {
		if t.line != nil {
			n += len(t.line.head) + len(t.line.body) + len(t.line.serverJSON) + 32 // the score, a comma and a brace
		}
	}
	dst = slices.Grow(dst, n) // one growth, not one per tool
	dst = append(dst, '[')
	for i, t := range ts {
		if i > 0 {
			dst = append(dst, ',')
		}
		if t.line == nil || t.line.head == nil || math.IsNaN(t.Score) || math.IsInf(t.Score, 0) ||
			t.Score != 0 && (math.Abs(t.Score) < 1e-6 || math.Abs(t.Score) >= 1e21) { // written with an exponent
			return dst, false
		}
		dst = append(dst, t.line.head...)
		dst = strconv.AppendFloat(dst, t.Score, 'f', -1, 64)
		dst = append(dst, t.line.body...)
		if t.Unavailable != "" {
			dst = appendField(dst, "unavailable", t.Unavailable)
		}
		dst = append(dst, t.line.serverJSON...)
		if len(t.Alternatives) > 0 {
			dst = appendField(dst, "alternatives", t.Alternatives)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), true
}

// appendField appends ,"key":v with v as json.Marshal writes it.
func appendField(dst []byte, key string, v any) []byte {
	b, _ := json.Marshal(v) // strings and alternatives: it cannot fail
	dst = append(dst, `,"`...)
	dst = append(dst, key...)
	dst = append(dst, `":`...)
	return append(dst, b...)
}
