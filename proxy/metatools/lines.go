package metatools

// What request_more_tools shows of a tool beside its score is read from
// its definition alone, so it is kept per tool: a signature parses the
// input schema, which cost more than the rest of the answer's text.

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mcp-router/mcp-router/internal/clip"
)

// maxLines bounds the tools whose lines are kept; past it they are
// dropped and read again, as a catalog much larger than a session's
// searches reach would otherwise be held twice.
const maxLines = 4096

// toolLine is what request_more_tools shows of one tool, and the parts of
// its definition it was read from.
type toolLine struct {
	schema            json.RawMessage
	description       string
	server            string
	signature         string
	sentence, aboutIt string // first sentence of the description; ": <server description>" or ""
}

// lines keeps the toolLine of each tool shown, by exposed name.
type lines struct {
	mu sync.Mutex
	m  map[string]*toolLine
}

// of is the line of tool name with that definition, read again when any
// part of it changed since it was kept.
func (l *lines) of(name string, schema json.RawMessage, description, server string) *toolLine {
	l.mu.Lock()
	tl := l.m[name]
	l.mu.Unlock()
	if tl != nil && tl.description == description && tl.server == server && bytes.Equal(tl.schema, schema) {
		return tl
	}
	tl = &toolLine{schema: schema, description: description, server: server,
		signature: toolSignature(name, schema), sentence: firstSentence(description),
		aboutIt: aboutServer(clip.Ellipsis(server, maxSignatureServer))}
	l.mu.Lock()
	if l.m == nil || len(l.m) >= maxLines {
		l.m = map[string]*toolLine{}
	}
	l.m[name] = tl
	l.mu.Unlock()
	return tl
}
