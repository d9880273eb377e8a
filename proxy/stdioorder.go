package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// stdioCalls admits a stdio client's tools/call requests in the order the
// client sent them. mcp-go's stdio server hands calls to a pool of
// workers, which may start them in any order; a request reusing the id of
// a call still in flight must be refused whichever worker gets it first,
// so the in-flight ids of a stdio connection are taken here, as the lines
// go by, rather than in a hook. It reads the pre-checked lines and hands
// mcp-go those it admits; it answers the others itself.
type stdioCalls struct {
	r      *bufio.Reader // the pre-checked lines
	answer func([]byte) error
	log    *slog.Logger
	line   []byte // what is left of the line being handed on

	mu  sync.Mutex
	ids map[string]bool // ids (idText) of the calls in flight
}

func newStdioCalls(r io.Reader, answer func([]byte) error, log *slog.Logger) *stdioCalls {
	return &stdioCalls{r: bufio.NewReaderSize(r, 64<<10), answer: answer, log: log, ids: map[string]bool{}}
}

// stdioCallsKey carries a stdio connection's stdioCalls in its requests'
// contexts, for the hooks that end its calls.
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

// Read hands on the admitted lines.
func (c *stdioCalls) Read(p []byte) (int, error) {
	for len(c.line) == 0 {
		line, err := c.next()
		if len(line) > 0 && c.admit(line) {
			c.line = line
		}
		if err != nil && len(c.line) == 0 {
			return 0, err
		}
		if err != nil {
			break // hand on the last line; the error comes with the next Read
		}
	}
	n := copy(p, c.line)
	c.line = c.line[n:]
	return n, nil
}

// next reads one line; it is valid until the next call.
func (c *stdioCalls) next() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	long := append([]byte(nil), line...) // a line longer than the buffer
	for err == bufio.ErrBufferFull {
		line, err = c.r.ReadSlice('\n')
		long = append(long, line...)
	}
	return long, err
}

// callID returns the raw id of a tools/call line, and whether it is one
// (with an id). A line whose members the scanner reads plainly is not
// decoded; any other is, by encoding/json, as mcp-go reads it.
func callID(line []byte) (json.RawMessage, bool) {
	if head, err := wire.ReadHead(line); err == nil && head.Top == '{' && bytes.IndexByte(head.Method, '\\') < 0 {
		return head.ID, string(head.Method) == `"`+string(mcp.MethodToolsCall)+`"` && len(head.ID) > 0
	}
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != string(mcp.MethodToolsCall) || len(m.ID) == 0 {
		return nil, false
	}
	return m.ID, true
}

// admit takes the id of a tools/call line, or answers the line with
// -32600 when a call in flight has it. Other lines pass.
func (c *stdioCalls) admit(line []byte) bool {
	// A cheap test first; a message with any escape may spell the method
	// "tools\/call", so it is decoded.
	if !bytes.Contains(line, []byte(mcp.MethodToolsCall)) && !bytes.ContainsRune(line, '\\') {
		return true
	}
	rawID, isCall := callID(line)
	if !isCall {
		return true // mcp-go answers what is not a call
	}
	var id any
	if json.Unmarshal(rawID, &id) != nil || id == nil {
		return true
	}
	key := idText(id)
	c.mu.Lock()
	taken := c.ids[key]
	c.ids[key] = true
	c.mu.Unlock()
	if !taken {
		return true
	}
	c.log.Debug("client message refused", "transport", "stdio", "code", mcp.INVALID_REQUEST, "reason", "request id in use")
	reply, err := json.Marshal(struct {
		JSONRPC string                  `json:"jsonrpc"`
		ID      json.RawMessage         `json:"id"`
		Error   mcp.JSONRPCErrorDetails `json:"error"`
	}{mcp.JSONRPC_VERSION, rawID, mcp.JSONRPCErrorDetails{Code: mcp.INVALID_REQUEST,
		Message: fmt.Sprintf("request id %v is already used by a call in progress", id)}})
	if err == nil {
		err = c.answer(append(reply, '\n'))
	}
	if err != nil {
		c.log.Debug("refusal not sent", "transport", "stdio", "err", err)
	}
	return false
}

// done frees the id of a call that ended.
func (c *stdioCalls) done(id any) {
	c.mu.Lock()
	delete(c.ids, idText(id))
	c.mu.Unlock()
}
