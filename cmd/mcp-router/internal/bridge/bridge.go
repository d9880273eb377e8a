// Package bridge relays a stdio MCP client (`mcp-router connect`) to a gateway serving streamable
// HTTP (`mcp-router serve --http`). Messages pass through both ways as they are; the bridge keeps
// the HTTP session, opens the standalone event stream once the session is initialized, and ends the
// session with DELETE when stdin ends. When HTTP fails, each request waiting for an answer gets a
// JSON-RPC error naming the problem, so the client is never left hanging.
package bridge

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-router/mcp-router/internal/sameorigin"
)

// noticeTimeout bounds the POST of a notification or of an answer to the gateway's request, which
// the gateway acknowledges at once (202).
const noticeTimeout = 30 * time.Second

// DefaultMaxInFlight is how many client requests may wait for the gateway at once.
const DefaultMaxInFlight = 128

// DefaultMaxMessageBytes bounds one message either way: a line on stdin, a JSON body or one
// server-sent event from the gateway.
const DefaultMaxMessageBytes = 4 << 20

// Options configures a Bridge.
type Options struct {
	// URL is the gateway's MCP endpoint, e.g. http://127.0.0.1:8080/mcp.
	URL string
	// Header is sent with every HTTP request (Authorization, extra headers). It is never logged.
	Header http.Header
	// MaxMessageBytes bounds one message either way; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// MaxInFlight bounds the client's requests waiting for an answer; one more is answered with an
	// error. 0 means DefaultMaxInFlight.
	MaxInFlight int
	// Logger receives what goes wrong; nil is silent. Never stdout.
	Logger *slog.Logger
}

// deleteTimeout bounds the DELETE that ends the session.
const deleteTimeout = 5 * time.Second

// Bridge relays one stdio client to one gateway session.
type Bridge struct {
	opts   Options
	log    *slog.Logger
	shown  string       // opts.URL without userinfo and query, for texts
	client *http.Client // dials within 10s, no overall timeout (calls and event streams are long)

	outMu sync.Mutex // serializes writes to out
	out   io.Writer

	mu        sync.Mutex
	sessionID string
	protocol  string
	pending   map[string]*pending // by the request's raw id
	listening bool                // the standalone GET stream was started
}

// pending is a client request waiting for the gateway's answer.
type pending struct {
	cancelled bool // the client sent notifications/cancelled for it
	answered  bool
}

// New returns a Bridge; it does no I/O.
func New(opts Options) *Bridge {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	client := &http.Client{CheckRedirect: sameOrigin, Transport: &http.Transport{
		Proxy:       http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	}}
	return &Bridge{opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)), shown: shownURL(opts.URL), client: client, pending: map[string]*pending{}}
}

// Run relays in (the client's messages) to the gateway and the gateway's messages to out until in
// ends or ctx is done, then stops what is in flight and ends the HTTP session. It returns an error
// only when reading in fails other than by ending. The goroutine reading in may outlive Run until
// in returns. Run is called once.
func (b *Bridge) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	b.out = out
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		b.endSession(context.WithoutCancel(ctx))
		b.client.CloseIdleConnections()
	}()
	lines := make(chan line)
	readDone := make(chan struct{})
	var readErr error // set before readDone closes
	go func() {
		defer close(readDone)
		readErr = readLines(in, b.opts.MaxMessageBytes, lines, ctx.Done())
	}()
	for {
		var l line
		select {
		case <-ctx.Done():
			return nil
		case l = <-lines:
		case <-readDone:
			if readErr != nil && !errors.Is(readErr, io.EOF) && !errors.Is(readErr, io.ErrClosedPipe) {
				return fmt.Errorf("reading the client's messages: %w", readErr)
			}
			return nil
		}
		if l.err != nil {
			b.writeError(nil, codeInvalidRequest, l.err.Error())
			continue
		}
		b.handle(ctx, &wg, l.data)
	}
}

// line is one message read from the client, or why it was refused.
type line struct {
	data []byte
	err  error
}

// readLines sends each non-empty line of in to lines until in ends (the error it ended with) or
// done closes (nil). A line over max is refused (and read to its end, so framing holds).
func readLines(in io.Reader, max int, lines chan<- line, done <-chan struct{}) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		data, tooLong, err := readLine(br, max)
		var l line
		switch {
		case tooLong:
			l.err = fmt.Errorf("message larger than %d bytes refused", max)
		case len(bytes.TrimSpace(data)) > 0:
			l.data = bytes.TrimSpace(data)
		}
		if l.data != nil || l.err != nil {
			select {
			case lines <- l:
			case <-done:
				return nil
			}
		}
		if err != nil {
			return err
		}
	}
}

// envelope is what the bridge reads of a message to route it.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (e *envelope) isRequest() bool      { return e.Method != "" && len(e.ID) > 0 && string(e.ID) != "null" }
func (e *envelope) isNotification() bool { return e.Method != "" && len(e.ID) == 0 }
func (e *envelope) isResponse() bool     { return e.Method == "" && (e.Result != nil || e.Error != nil) }

// idKey is the id in one canonical form, so "1" and " 1" match.
func idKey(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// handle sends one client message on its way.
func (b *Bridge) handle(ctx context.Context, wg *sync.WaitGroup, data []byte) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		b.writeError(nil, codeParseError, "parse error: "+err.Error())
		return
	}
	switch {
	case env.isRequest():
		if err := b.track(env.ID); err != nil {
			b.writeError(env.ID, codeInvalidRequest, err.Error())
			return
		}
		if env.Method == "initialize" {
			// Nothing else may go until the session exists: the answer carries its id.
			b.post(ctx, data, &env)
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.post(ctx, data, &env)
		}()
	case env.isNotification() || env.isResponse():
		// In order, as the client sent them (the gateway answers at once).
		if env.Method == "notifications/cancelled" {
			b.cancelled(env.Params)
		}
		pctx, cancel := context.WithTimeout(ctx, noticeTimeout)
		b.post(pctx, data, &env)
		cancel()
		if env.Method == "notifications/initialized" {
			b.listen(ctx, wg)
		}
	default:
		b.writeError(env.ID, codeInvalidRequest, "not a JSON-RPC request, notification or response")
	}
}

// track notes a request as waiting, unless its id is already waiting or too many are.
func (b *Bridge) track(id json.RawMessage) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := idKey(id)
	switch {
	case b.pending[k] != nil:
		return fmt.Errorf("request id %s is already in use by a request in flight", k)
	case len(b.pending) >= b.opts.MaxInFlight:
		return fmt.Errorf("too many requests in flight (at most %d); wait for some to finish", b.opts.MaxInFlight)
	}
	b.pending[k] = &pending{}
	return nil
}

// cancelled marks the request the client gave up on: whatever becomes of its stream, the client
// expects no answer.
func (b *Bridge) cancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	b.mark(p.RequestID, func(pr *pending) { pr.cancelled = true })
}

// settle removes a request from the pending ones and reports whether the client still expects an
// answer to it.
func (b *Bridge) settle(id json.RawMessage) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := idKey(id)
	pr := b.pending[k]
	delete(b.pending, k)
	return pr != nil && !pr.cancelled && !pr.answered
}

// mark applies f to the pending request with this id, if any.
func (b *Bridge) mark(id json.RawMessage, f func(*pending)) {
	b.mu.Lock()
	if pr := b.pending[idKey(id)]; pr != nil {
		f(pr)
	}
	b.mu.Unlock()
}

// post sends one message and relays what comes back. For a request, any failure becomes a JSON-RPC
// error answer unless the gateway answered or the client cancelled it.
func (b *Bridge) post(ctx context.Context, data []byte, env *envelope) {
	err := b.exchange(ctx, data, env)
	if !env.isRequest() {
		if err != nil && ctx.Err() == nil {
			b.log.Warn("message not delivered to the gateway", "method", env.Method, "err", err)
		}
		return
	}
	if err == nil && b.settle(env.ID) {
		err = errors.New("the gateway ended the response without answering")
	} else if err != nil && !b.settle(env.ID) {
		err = nil
	}
	if err != nil && ctx.Err() == nil {
		b.log.Warn("request failed", "method", env.Method, "err", err)
		b.writeError(env.ID, codeGateway, err.Error())
	}
}

// exchange POSTs data and relays the reply: nothing (202), one JSON message, or an event stream.
func (b *Bridge) exchange(ctx context.Context, data []byte, env *envelope) error {
	req, err := b.request(ctx, http.MethodPost, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := b.client.Do(req)
	if err != nil {
		return b.transportError(err)
	}
	defer resp.Body.Close()
	if err := b.statusError(resp); err != nil {
		return err
	}
	if env.Method == "initialize" {
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			b.mu.Lock()
			b.sessionID = id
			b.mu.Unlock()
		}
	}
	if !env.isRequest() || resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(b.opts.MaxMessageBytes)+1))
		if err != nil {
			return fmt.Errorf("reading the gateway's answer: %w", err)
		}
		if len(body) > b.opts.MaxMessageBytes {
			return fmt.Errorf("the gateway's answer is larger than %d bytes", b.opts.MaxMessageBytes)
		}
		return b.relay(body)
	case "text/event-stream":
		return b.events(resp.Body)
	default:
		return fmt.Errorf("the gateway answered with Content-Type %q, not JSON or an event stream", resp.Header.Get("Content-Type"))
	}
}

// request is an HTTP request to the gateway with the session's headers.
func (b *Bridge) request(ctx context.Context, method string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, b.opts.URL, body)
	if err != nil {
		return nil, fmt.Errorf("gateway URL %q: %w", b.shown, err)
	}
	h := req.Header
	for k, vs := range b.opts.Header {
		h[k] = append([]string(nil), vs...)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessionID != "" {
		h.Set("Mcp-Session-Id", b.sessionID)
	}
	if b.protocol != "" {
		h.Set("Mcp-Protocol-Version", b.protocol)
	}
	return req, nil
}

// listen opens the standalone event stream, for the gateway's messages outside any request (list
// changes, its own requests), once per session. A gateway without one answers 405.
func (b *Bridge) listen(ctx context.Context, wg *sync.WaitGroup) {
	b.mu.Lock()
	started := b.listening || b.sessionID == ""
	b.listening = true
	b.mu.Unlock()
	if started {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		req, err := b.request(ctx, http.MethodGet, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := b.client.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				b.log.Warn("event stream not opened", "err", b.transportError(err))
			}
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusMethodNotAllowed {
			return
		}
		if err := b.statusError(resp); err != nil {
			b.log.Warn("event stream not opened", "err", err)
			return
		}
		if err := b.events(resp.Body); err != nil && ctx.Err() == nil {
			b.log.Warn("event stream ended", "err", err)
		}
	}()
}

// events relays each event of a stream to the client.
func (b *Bridge) events(body io.Reader) error {
	br := bufio.NewReaderSize(body, 64<<10)
	var data []byte
	tooLong := false
	for {
		l, lineTooLong, err := readLine(br, b.opts.MaxMessageBytes)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("reading the gateway's event stream: %w", err)
		case lineTooLong:
			return fmt.Errorf("a line of the event stream is larger than %d bytes", b.opts.MaxMessageBytes)
		}
		switch {
		case len(l) == 0: // the end of an event
			if tooLong {
				return fmt.Errorf("a message from the gateway is larger than %d bytes", b.opts.MaxMessageBytes)
			}
			if len(data) > 0 {
				if err := b.relay(data); err != nil {
					return err
				}
			}
			data = data[:0]
		case bytes.HasPrefix(l, []byte("data:")):
			v := bytes.TrimPrefix(bytes.TrimPrefix(l, []byte("data:")), []byte(" "))
			if len(data)+len(v)+1 > b.opts.MaxMessageBytes {
				tooLong = true
				continue
			}
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, v...)
		}
	}
}

// readLine reads one line without its line ending (a last line may have none). A line over max
// bytes is read to its end, so framing holds, and dropped: tooLong says so.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= max+2 { // +2: the line ending
			line = append(line, chunk...)
		} else {
			tooLong = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		tooLong = tooLong || len(line) > max
		if err != nil && (len(line) == 0 && !tooLong || !errors.Is(err, io.EOF)) {
			return nil, false, err
		}
		return line, tooLong, nil
	}
}

// relay writes one message from the gateway to the client, on one line, and notes the answers and
// the session's protocol version.
func (b *Bridge) relay(msg []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		return fmt.Errorf("the gateway sent a message that is not JSON: %w", err)
	}
	var env envelope
	if err := json.Unmarshal(buf.Bytes(), &env); err != nil {
		return fmt.Errorf("the gateway sent a message that is not a JSON-RPC object: %w", err)
	}
	if env.isResponse() {
		b.noteProtocol(&env)
		b.mark(env.ID, func(pr *pending) { pr.answered = true })
	}
	return b.write(buf.Bytes())
}

// noteProtocol keeps the protocol version an initialize answer agreed on, for the
// MCP-Protocol-Version header of what follows.
func (b *Bridge) noteProtocol(env *envelope) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      *struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	if json.Unmarshal(env.Result, &r) != nil || r.ProtocolVersion == "" || r.ServerInfo == nil {
		return
	}
	b.mu.Lock()
	b.protocol = r.ProtocolVersion
	b.mu.Unlock()
}

func (b *Bridge) write(msg []byte) error {
	b.outMu.Lock()
	defer b.outMu.Unlock()
	if _, err := b.out.Write(append(msg, '\n')); err != nil {
		return fmt.Errorf("writing to the client: %w", err)
	}
	return nil
}

// JSON-RPC error codes the bridge answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeGateway        = -32000 // the gateway could not be reached or refused the request
)

func (b *Bridge) writeError(id json.RawMessage, code int, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	if err == nil {
		err = b.write(msg)
	}
	if err != nil {
		b.log.Warn("answering the client", "err", err)
	}
}

// transportError names what went wrong reaching the gateway.
func (b *Bridge) transportError(err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("no gateway at %s (connection refused): is `mcp-router serve --http` running?", b.shown)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("no gateway at %s (host not found)", b.shown)
	}
	return fmt.Errorf("cannot reach the gateway at %s: %w", b.shown, b.withoutSecrets(err))
}

// statusError turns an HTTP error status into a message the user can act on.
func (b *Bridge) statusError(resp *http.Response) error {
	if resp.StatusCode < 300 {
		return nil
	}
	detail, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	text := strings.TrimSpace(string(detail))
	var rpc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(detail, &rpc) == nil && rpc.Error.Message != "" {
		text = rpc.Error.Message
	}
	suffix := ""
	if text != "" {
		suffix = ": " + b.redact(strings.ToValidUTF8(text, "?"))
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return fmt.Errorf("token refused by the gateway at %s (HTTP 401): set MCP_ROUTER_TOKEN (or --token) to one of its http.bearer_tokens", b.shown)
	case http.StatusForbidden:
		return fmt.Errorf("the gateway at %s refused the request (HTTP 403)%s", b.shown, suffix)
	case http.StatusNotFound:
		b.mu.Lock()
		hadSession := b.sessionID != ""
		b.mu.Unlock()
		if hadSession {
			return fmt.Errorf("the gateway no longer knows this session (HTTP 404; it restarted or the session expired): restart the client")
		}
		return fmt.Errorf("no MCP endpoint at %s (HTTP 404): the gateway serves it at /mcp", b.shown)
	case http.StatusRequestEntityTooLarge:
		return fmt.Errorf("the gateway refused a message as too large (HTTP 413)%s", suffix)
	}
	return fmt.Errorf("the gateway at %s answered HTTP %d%s", b.shown, resp.StatusCode, suffix)
}

// endSession ends the HTTP session with DELETE, within deleteTimeout.
func (b *Bridge) endSession(ctx context.Context) {
	b.mu.Lock()
	id := b.sessionID
	b.mu.Unlock()
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, deleteTimeout)
	defer cancel()
	req, err := b.request(ctx, http.MethodDelete, nil)
	if err != nil {
		return
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.log.Warn("ending the session", "err", b.transportError(err))
		return
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		b.log.Warn("ending the session", "status", resp.StatusCode)
	}
}

func mediaType(ct string) string {
	t, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// The token and headers connect sends belong to the URL it was given: the client follows a redirect
// only within that URL's origin (Go's client would send --header values, and a request body, to any
// host a gateway or something posing as one redirects to), and no text the bridge writes (errors to
// the client, logs) holds the URL's userinfo or query, or a header's value.

// ErrCrossOrigin refuses a redirect to another origin than the gateway's.
var ErrCrossOrigin = errors.New("redirect to another origin refused (connect sends its token and headers to the URL given only; give the URL it redirects to)")

// maxRedirects bounds the redirects followed within the gateway's origin.
const maxRedirects = 5

// sameOrigin is the CheckRedirect of the bridge's client.
var sameOrigin = sameorigin.Redirects(maxRedirects, func(_, to *url.URL) error {
	return fmt.Errorf("%w: to %s://%s", ErrCrossOrigin, to.Scheme, to.Host)
})

// shownURL is raw without userinfo, query and fragment.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(the gateway URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// withoutSecrets is err's text without the request's URL (Go's client names it, query included) and
// header values.
func (b *Bridge) withoutSecrets(err error) error {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = strings.ReplaceAll(msg, ue.URL, b.shown)
	}
	if clean := b.redact(msg); clean != err.Error() {
		return &cleanError{msg: clean, err: err}
	}
	return err
}

// redact replaces in t every header value the bridge sends (and a bearer token alone), so that a
// gateway that quotes them is not repeated.
func (b *Bridge) redact(t string) string {
	for _, vs := range b.opts.Header {
		for _, v := range vs {
			if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 6 {
				t = strings.ReplaceAll(t, tok, "[redacted]")
			}
			if len(v) >= 6 {
				t = strings.ReplaceAll(t, v, "[redacted]")
			}
		}
	}
	return t
}

type cleanError struct {
	msg string
	err error
}

func (e *cleanError) Error() string { return e.msg }
func (e *cleanError) Unwrap() error { return e.err }
