package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// stdioSessionID is the session id of a stdio client (a process has one).
const stdioSessionID = "stdio"

// maxClientRequests bounds the requests to the client awaiting replies.
const maxClientRequests = 256

// clientNotifications is how many notifications may wait for the writer
// of a stdio session; mcp-go refuses more rather than block.
const clientNotifications = 100

// stdioSession is the mcp-go session of one stdio client: it keeps what
// mcp-go keeps per session, queues notifications for the connection to
// write, and sends the client the proxy's own requests (sampling,
// elicitation, roots), matching the replies by id.
type stdioSession struct {
	send          func(msg any) error // writes one whole message to the client
	notifications chan mcp.JSONRPCNotification
	// lists, when set, holds back list_changed notifications that tell
	// the client nothing new.
	lists *listGate

	initialized atomic.Bool
	level       atomic.Pointer[mcp.LoggingLevel]
	info        atomic.Pointer[mcp.Implementation]
	caps        atomic.Pointer[mcp.ClientCapabilities]
	version     atomic.Pointer[string]
	lastID      atomic.Int64 // the id of the last request sent to the client

	mu      sync.Mutex
	pending map[int64]chan []byte // requests to the client awaiting a reply, by id
}

var (
	_ server.ClientSession              = (*stdioSession)(nil)
	_ server.SessionWithLogging         = (*stdioSession)(nil)
	_ server.SessionWithClientInfo      = (*stdioSession)(nil)
	_ server.SessionWithProtocolVersion = (*stdioSession)(nil)
	_ server.SessionWithSampling        = (*stdioSession)(nil)
	_ server.SessionWithElicitation     = (*stdioSession)(nil)
	_ server.SessionWithRoots           = (*stdioSession)(nil)
)

func newStdioSession(send func(msg any) error) *stdioSession {
	return &stdioSession{send: send, notifications: make(chan mcp.JSONRPCNotification, clientNotifications),
		pending: map[int64]chan []byte{}}
}

func (s *stdioSession) SessionID() string { return stdioSessionID }

func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notifications }

// Initialize marks the session ready for notifications, logging at error
// level until the client asks for another.
func (s *stdioSession) Initialize() {
	s.SetLogLevel(mcp.LoggingLevelError)
	s.initialized.Store(true)
}

func (s *stdioSession) Initialized() bool { return s.initialized.Load() }

func (s *stdioSession) SetLogLevel(level mcp.LoggingLevel) { s.level.Store(&level) }

func (s *stdioSession) GetLogLevel() mcp.LoggingLevel { return loadOr(&s.level, mcp.LoggingLevelError) }

func (s *stdioSession) GetClientInfo() mcp.Implementation {
	return loadOr(&s.info, mcp.Implementation{})
}

func (s *stdioSession) SetClientInfo(info mcp.Implementation) { s.info.Store(&info) }

func (s *stdioSession) GetClientCapabilities() mcp.ClientCapabilities {
	return loadOr(&s.caps, mcp.ClientCapabilities{})
}

func (s *stdioSession) SetClientCapabilities(caps mcp.ClientCapabilities) { s.caps.Store(&caps) }

// ProtocolVersion is the version initialize negotiated, "" before.
func (s *stdioSession) ProtocolVersion() string { return loadOr(&s.version, "") }

// SetProtocolVersion records the version initialize negotiated.
func (s *stdioSession) SetProtocolVersion(version string) { s.version.Store(&version) }

// relay writes the queued notifications to the client until ctx ends. A
// list_changed waits listQuiet, so that those close together are sent
// once, and only when the session's list differs (listGate).
func (s *stdioSession) relay(ctx context.Context, failed func(error)) {
	quiet := time.NewTimer(listQuiet)
	quiet.Stop()
	defer quiet.Stop()
	var held []string // list_changed methods waiting for the quiet period
	for {
		select {
		case n := <-s.notifications:
			if s.lists != nil && isListChanged(n.Method) {
				if len(held) == 0 {
					quiet.Reset(listQuiet)
				}
				if !slices.Contains(held, n.Method) {
					held = append(held, n.Method)
				}
				continue
			}
			if err := s.send(n); err != nil {
				failed(err)
			}
		case <-quiet.C:
			for _, m := range held {
				if !s.lists.news(m) {
					continue
				}
				if err := s.send(mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: m}}); err != nil {
					failed(err)
				}
			}
			held = held[:0]
		case <-ctx.Done():
			return
		}
	}
}

// RequestSampling asks the client to sample and waits for its answer.
func (s *stdioSession) RequestSampling(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	res, err := requestOf[mcp.CreateMessageResult](ctx, s, mcp.MethodSamplingCreateMessage, req.CreateMessageParams)
	if err != nil {
		return nil, err
	}
	if res.Content, err = mcp.ParseSamplingContent(res.Content); err != nil {
		return nil, fmt.Errorf("reading the client's %s content: %w", mcp.MethodSamplingCreateMessage, err)
	}
	return res, nil
}

// RequestElicitation asks the client for input and waits for its answer.
func (s *stdioSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return requestOf[mcp.ElicitationResult](ctx, s, mcp.MethodElicitationCreate, req.Params)
}

// ListRoots asks the client for its roots and waits for its answer.
func (s *stdioSession) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return requestOf[mcp.ListRootsResult](ctx, s, mcp.MethodListRoots, nil)
}

// requestOf sends the client a request and decodes the result of its reply.
func requestOf[R any](ctx context.Context, s *stdioSession, method mcp.MCPMethod, params any) (*R, error) {
	raw, err := s.request(ctx, method, params)
	if err != nil {
		return nil, err
	}
	var res R
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("reading the client's %s result: %w", method, err)
	}
	return &res, nil
}

// errTooManyClientRequests refuses a request past maxClientRequests.
var errTooManyClientRequests = fmt.Errorf("more than %d requests to the client await replies", maxClientRequests)

// request sends the client a request with an id of the session's own and
// returns its reply's result, an error reply's error, or ctx's error.
func (s *stdioSession) request(ctx context.Context, method mcp.MCPMethod, params any) (json.RawMessage, error) {
	id := s.lastID.Add(1)
	replied := make(chan []byte, 1)
	s.mu.Lock()
	if len(s.pending) >= maxClientRequests {
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, errTooManyClientRequests)
	}
	s.pending[id] = replied
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	err := s.send(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{mcp.JSONRPC_VERSION, id, string(method), params})
	if err != nil {
		return nil, fmt.Errorf("sending %s to the client: %w", method, err)
	}
	var line []byte
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case line = <-replied:
	}
	var reply struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &reply); err != nil {
		return nil, fmt.Errorf("reading the client's reply to %s: %w", method, err)
	}
	if reply.Error != nil {
		return nil, fmt.Errorf("%s request failed: %s (code %d)", method, reply.Error.Message, reply.Error.Code)
	}
	return reply.Result, nil
}

// deliver hands a reply of the client to the request it answers, and
// reports whether one awaited it. The session's own ids are whole numbers.
func (s *stdioSession) deliver(id, line []byte) bool {
	n, err := strconv.ParseInt(string(id), 10, 64)
	if err != nil {
		return false
	}
	s.mu.Lock()
	replied, ok := s.pending[n]
	s.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case replied <- line:
	default: // a second reply with the id: the first counts
	}
	return true
}

// stdioCalls admits a stdio client's tools/call ids in the order the
// client sent them: the calls run on several workers in any order, and a
// request reusing the id of a call in flight must be refused whichever
// worker would get it first. An id is freed when its handler returns.
type stdioCalls struct {
	answer func([]byte) error // writes a refusal to the client
	log    *slog.Logger

	mu  sync.Mutex
	ids map[string]bool // ids (idText) of the calls in flight
}

func newStdioCalls(answer func([]byte) error, log *slog.Logger) *stdioCalls {
	return &stdioCalls{answer: answer, log: log, ids: map[string]bool{}}
}

// stdioRequest reports whether ctx's request came over stdio, whose
// connection admits its calls itself.
func stdioRequest(ctx context.Context) bool {
	_, ok := server.ClientSessionFromContext(ctx).(*stdioSession)
	return ok
}

// idKey is a request id token as idText writes the value encoding/json
// decodes it to (mcp-go's reading), plain tokens read without it.
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

// admit takes the id of a tools/call as the call's key, or answers the
// call with -32600 when a call in flight has the id.
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

// loadOr is what p points to, or def while p is nil.
func loadOr[T any](p *atomic.Pointer[T], def T) T {
	if v := p.Load(); v != nil {
		return *v
	}
	return def
}
