package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// stdioCalls admits a stdio client's tools/call requests in the order the
// client sent them. The calls run on several workers, which may start
// them in any order; a request reusing the id of a call still in flight
// must be refused whichever worker would get it first, so the in-flight
// ids of a stdio connection are taken here, as the reader reads the
// lines, rather than in a hook, and freed when the call's handler
// returns.
type stdioCalls struct {
	answer func([]byte) error // writes a refusal to the client
	log    *slog.Logger

	mu  sync.Mutex
	ids map[string]bool // ids (idText) of the calls in flight
}

func newStdioCalls(answer func([]byte) error, log *slog.Logger) *stdioCalls {
	return &stdioCalls{answer: answer, log: log, ids: map[string]bool{}}
}

// stdioCallsKey carries a stdio connection's stdioCalls in its requests'
// contexts, for the hooks that leave its calls alone.
type stdioCallsKey struct{}

func (c *stdioCalls) withContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, stdioCallsKey{}, c)
}

// stdioCallsOf is ctx's stdio connection's stdioCalls, or nil for a
// request that did not come over stdio.
func stdioCallsOf(ctx context.Context) *stdioCalls {
	c, _ := ctx.Value(stdioCallsKey{}).(*stdioCalls)
	return c
}

// idKey is a request id token as idText writes the value encoding/json
// decodes it to (mcp-go's reading): a number as a float64, a string
// decoded. Plain tokens are read without encoding/json.
func idKey(raw []byte) (string, bool) {
	switch {
	case len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw):
		return string(raw[1 : len(raw)-1]), true
	case len(raw) > 0 && raw[0] != '"':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			break
		}
		return idText(f), true
	}
	var id any
	if json.Unmarshal(raw, &id) != nil || id == nil {
		return "", false
	}
	return idText(id), true
}

// admit takes the id of a tools/call and returns it as the call's key, or
// answers the call with -32600 when a call in flight has the id.
func (c *stdioCalls) admit(m wire.Message) (key string, ok bool) {
	key, ok = idKey(m.ID())
	if !ok {
		return "", true // the pre-check passes only valid ids; mcp-go answers the others
	}
	c.mu.Lock()
	taken := c.ids[key]
	c.ids[key] = true
	c.mu.Unlock()
	if !taken {
		return key, true
	}
	c.log.Debug("client message refused", "transport", "stdio", "code", mcp.INVALID_REQUEST, "reason", "request id in use")
	reply, err := json.Marshal(struct {
		JSONRPC string                  `json:"jsonrpc"`
		ID      json.RawMessage         `json:"id"`
		Error   mcp.JSONRPCErrorDetails `json:"error"`
	}{mcp.JSONRPC_VERSION, m.ID(), mcp.JSONRPCErrorDetails{Code: mcp.INVALID_REQUEST,
		Message: fmt.Sprintf("request id %s is already used by a call in progress", key)}})
	if err == nil {
		err = c.answer(append(reply, '\n'))
	}
	if err != nil {
		c.log.Debug("refusal not sent", "transport", "stdio", "err", err)
	}
	return "", false
}

// done frees the id of a call whose handler returned.
func (c *stdioCalls) done(key string) {
	c.mu.Lock()
	delete(c.ids, key)
	c.mu.Unlock()
}
