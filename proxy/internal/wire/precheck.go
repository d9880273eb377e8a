package wire

// The pre-check: each client message is checked in one pass (jsonscan.go)
// before mcp-go parses it, and refused with the JSON-RPC error that names
// the problem, or dropped when it cannot be answered (BI-01..BI-03, BI-08,
// BI-10 and BI-13 in docs/reliability.md).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// envelope holds the raw JSON-RPC members of a message, nil when absent.
type envelope struct {
	jsonrpc, id, method, params, result, error []byte
}

// envelopeNames are the members envelope keeps, in its field order.
var envelopeNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// envelopeLike reports whether name is one of envelopeNames in any case.
func envelopeLike(name []byte) bool {
	for _, want := range envelopeNames {
		if equalFoldASCII(name, want) {
			return true
		}
	}
	return false
}

func (e *envelope) field(i int) *[]byte {
	return [...]*[]byte{&e.jsonrpc, &e.id, &e.method, &e.params, &e.result, &e.error}[i]
}

// verdict is the pre-check's decision: hand on (zero), refuse, or drop.
type verdict struct {
	env    envelope
	code   int             // the error to answer with; 0 when none
	id     json.RawMessage // the id the error echoes; nil for null
	reason string          // the error message, or why a message was dropped
	drop   bool            // a message that cannot be answered and is not handed on
	wait   chan struct{}   // closed once the refusal may no longer hold; nil when it holds
}

func (v verdict) pass() bool { return v.code == 0 && !v.drop }

// reply is the error response the verdict answers with.
func (v verdict) reply() []byte {
	id := v.id
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct { // id is a canonical token: it cannot fail
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{mcp.JSONRPC_VERSION, id, rpcError{v.code, v.reason}})
	return b
}

func refusal(code int, id json.RawMessage, format string, args ...any) verdict {
	prefix := "Invalid Request: "
	switch code {
	case mcp.PARSE_ERROR:
		prefix = "Parse error: "
	case mcp.METHOD_NOT_FOUND:
		prefix = "Method not found: "
	}
	return verdict{code: code, id: id, reason: prefix + fmt.Sprintf(format, args...)}
}

func dropMsg(env envelope, format string, args ...any) verdict {
	return verdict{env: env, drop: true, reason: fmt.Sprintf(format, args...)}
}

// precheck checks one client message:
//
//   - not JSON, or nested deeper than maxJSONDepth: -32700, id null;
//   - a batch, a non-object, a member twice or in another case ("ID"):
//     -32600, id null;
//   - a request with a null or non-string, non-number id (id null), a bad
//     jsonrpc, method or params, or carrying result or error: -32600,
//     echoing a valid id;
//   - an object with neither method nor result nor error: -32600;
//   - a notification with such a fault, or a notifications/cancelled with
//     a bad requestId: dropped (a notification is never answered);
//   - a response with a bad jsonrpc or id, or both result and error: dropped.
//
// Invalid UTF-8 passes; sanitizeUTF8 replaces it before anything reads it.
func precheck(msg []byte) verdict {
	sc, err := scanJSON(msg)
	switch {
	case err != nil:
		return refusal(mcp.PARSE_ERROR, nil, "%v", err)
	case sc.top == '[':
		return refusal(mcp.INVALID_REQUEST, nil, "batch arrays are not supported")
	case sc.top != '{':
		return refusal(mcp.INVALID_REQUEST, nil, "a message must be a JSON object")
	}
	env, err := envelopeOf(&sc)
	if err != nil {
		return refusal(mcp.INVALID_REQUEST, nil, "%v", err)
	}
	return env.check()
}

// envelopeOf picks the JSON-RPC members from a top-level object. A member
// named twice or in another case is an error: encoding/json matches names
// without regard to case, and what mcp-go reads must be what was checked.
func envelopeOf(sc *jsonScan) (envelope, error) {
	var env envelope
	if sc.n > maxMembers {
		return env, fmt.Errorf("more than %d members named like JSON-RPC's", maxMembers)
	}
	for _, m := range sc.kept() {
		name, err := memberName(m.name, sc.escaped)
		if err != nil {
			return env, err
		}
		for i, want := range envelopeNames {
			if !bytes.EqualFold(name, []byte(want)) {
				continue
			}
			if string(name) != want {
				return env, fmt.Errorf("member %q is not JSON-RPC's %q", cutEcho(string(name)), want)
			}
			if *env.field(i) != nil {
				return env, fmt.Errorf("member %q appears twice", want)
			}
			*env.field(i) = m.value
		}
	}
	return env, nil
}

// memberName is a member's name without quotes, decoded when escaped.
func memberName(raw []byte, escaped bool) ([]byte, error) {
	if !escaped || bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("member name %s: %w", cutEcho(string(raw)), err)
	}
	return []byte(s), nil
}

// equalFoldASCII is bytes.EqualFold for an ASCII want, without allocating.
func equalFoldASCII(b []byte, want string) bool {
	if len(b) != len(want) {
		return false
	}
	for i := range len(b) {
		if b[i]|0x20 != want[i]|0x20 {
			return false
		}
	}
	return true
}

// check applies the rules of precheck to a JSON object's members.
func (env envelope) check() verdict {
	switch {
	case env.method == nil && (env.result != nil || env.error != nil):
		return env.checkResponse()
	case env.method == nil:
		id, _ := validID(env.id)
		return refusal(mcp.INVALID_REQUEST, id, "no \"method\"")
	case env.id == nil:
		return env.checkNotification()
	}
	id, err := validID(env.id)
	if err != nil {
		return refusal(mcp.INVALID_REQUEST, nil, "%v", err)
	}
	if problem := env.problem(); problem != "" {
		return refusal(mcp.INVALID_REQUEST, id, "%s", problem)
	}
	return verdict{env: env}
}

func (env envelope) checkNotification() verdict {
	if problem := env.problem(); problem != "" {
		return dropMsg(env, "notification: %s", problem)
	}
	if methodIs(env.method, string(mcp.MethodNotificationCancelled)) {
		if _, err := cancelledID(env.params); err != nil {
			return dropMsg(env, "notifications/cancelled: %v", err)
		}
	}
	return verdict{env: env}
}

func (env envelope) checkResponse() verdict {
	if _, err := validID(env.id); err != nil || env.id == nil {
		return dropMsg(env, "response without a valid id")
	}
	if string(env.jsonrpc) != `"2.0"` {
		return dropMsg(env, "response whose jsonrpc is not \"2.0\"")
	}
	if env.result != nil && env.error != nil {
		return dropMsg(env, "response with both result and error")
	}
	return verdict{env: env}
}

// problem names what is wrong with a request or notification, if anything.
func (env envelope) problem() string {
	switch {
	case !isJSONRPC2(env.jsonrpc):
		return `"jsonrpc" must be "2.0"`
	case env.method[0] != '"':
		return `"method" must be a string`
	case env.params != nil && env.params[0] != '{' && string(env.params) != "null":
		return `"params" must be an object`
	case env.result != nil || env.error != nil:
		return `a request has no "result" or "error"`
	}
	return ""
}

func isJSONRPC2(raw []byte) bool {
	if string(raw) == `"2.0"` {
		return true
	}
	var s string
	return bytes.IndexByte(raw, '\\') >= 0 && json.Unmarshal(raw, &s) == nil && s == mcp.JSONRPC_VERSION
}

// validID returns the id to echo in an error, or why it is not valid; an absent id has neither.
func validID(raw []byte) (json.RawMessage, error) {
	switch {
	case raw == nil:
		return nil, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("\"id\": %w", err)
		}
		b, err := json.Marshal(s)
		return b, err
	case raw[0] == '-' || ('0' <= raw[0] && raw[0] <= '9'):
		return json.RawMessage(raw), nil
	case string(raw) == "null":
		return nil, errors.New(`"id" must be a string or a number, not null`)
	}
	return nil, errors.New(`"id" must be a string or a number`)
}

// requestKey is an id as mcp-go tells ids apart (idKey), "" for no valid
// id; a number beyond float64, which mcp-go cannot read, is its text.
func requestKey(raw []byte) string {
	if k := idKey(raw); k != "" || len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return k
	}
	return "n:" + string(raw)
}

// cancelledID returns the requestId of notifications/cancelled params.
func cancelledID(params []byte) ([]byte, error) {
	if params == nil || params[0] != '{' {
		return nil, errors.New("no params object")
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	if _, err := validID(p.RequestID); err != nil || p.RequestID == nil {
		return nil, errors.New("requestId must be a string or a number")
	}
	return p.RequestID, nil
}

// methodIs reports whether a method token is name, allocating only for escapes.
func methodIs(raw []byte, name string) bool {
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == name
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s == name
}

// methodName is a method token decoded, cut for error messages and logs.
func methodName(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "?"
	}
	return cutEcho(s)
}

// maxEcho bounds what a client-chosen name puts in an error message.
const maxEcho = 64

func cutEcho(s string) string {
	if len(s) > maxEcho {
		return s[:maxEcho] + "..."
	}
	return s
}

// PrecheckHTTP runs the pre-check on each POSTed message before mcp-go's
// streamable HTTP server reads it: a refusal is HTTP 400 with the JSON-RPC
// error, a dropped notification 202. An initialize with an Mcp-Session-Id
// is refused (mcp-go would open a new session and ignore the header). The
// body is read whole, or taken as it is from a Body (Guard reads it so,
// within its bounds).
type PrecheckHTTP struct {
	Next http.Handler
	Log  *slog.Logger
	// Cancelled, when set, hears each notifications/cancelled that passes
	// (the grace period's cancel, FI-19).
	Cancelled func(session string, requestID json.RawMessage)
}

func (h PrecheckHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil || !isJSONContent(r.Header.Get("Content-Type")) {
		h.Next.ServeHTTP(w, r) // mcp-go answers what is not a JSON POST
		return
	}
	body, held := BodyBytes(r.Body)
	var err error
	if !held {
		length := r.ContentLength // the client's word, without Guard's bound
		if length > MaxMessageBytes {
			length = -1
		}
		body, err = ReadAll(r.Body, length)
		_ = r.Body.Close()
	}
	if err != nil {
		h.refusal(w, refusal(mcp.PARSE_ERROR, nil, "reading the request body: %v", err))
		return
	}
	v := precheck(body)
	if v.pass() && r.Header.Get(server.HeaderKeySessionID) != "" && methodIs(v.env.method, string(mcp.MethodInitialize)) {
		id, _ := validID(v.env.id)
		v = refusal(mcp.INVALID_REQUEST, id, "initialize within session %s, which is initialized already",
			LogSafe(cutEcho(r.Header.Get(server.HeaderKeySessionID))))
	}
	switch {
	case v.drop || bareModernNote(r.Header, v.env):
		h.Log.Debug("client message dropped", "transport", "http", "reason", LogSafe(v.reason))
		w.WriteHeader(http.StatusAccepted)
	case !v.pass():
		h.refusal(w, v)
	default:
		if h.Cancelled != nil && v.env.id == nil && methodIs(v.env.method, string(mcp.MethodNotificationCancelled)) {
			if id, err := cancelledID(v.env.params); err == nil {
				h.Cancelled(r.Header.Get(server.HeaderKeySessionID), id)
			}
		}
		if !held || !utf8.Valid(body) { // else r.Body is body, unread
			body = sanitizeUTF8(body)
			r.Body = NewBody(body)
			r.ContentLength = int64(len(body))
		}
		if b, ok := r.Body.(*Body); ok {
			b.method = v.env.method
		}
		h.Next.ServeHTTP(w, r)
	}
}

// bareModernNote reports a 2026-07-28 notification whose params carry no
// _meta protocol version. SEP-2575 asks that _meta of requests only, and
// the Go SDK sends notifications/cancelled without it; mcp-go refuses
// such a message with a 400, which ends the Go SDK client's connection.
// With no session there is nothing for it to act on: the request it
// cancels ends with its own POST. So it is dropped here, with a 202.
func bareModernNote(h http.Header, env envelope) bool {
	var p struct {
		Meta *mcp.Meta `json:"_meta"`
	}
	if env.id != nil || env.method == nil || !mcp.IsModernProtocol(h.Get(mcp.HeaderProtocolVersion)) ||
		env.params != nil && json.Unmarshal(env.params, &p) != nil {
		return false
	}
	return p.Meta.ProtocolVersion() == ""
}

// precheckedKey marks a context with the Body of its request (WithPrechecked).
type precheckedKey struct{}

// WithPrechecked returns ctx marked with what PrecheckHTTP read of the
// message of body, a request's body it passed on; ctx as it is for any
// other body.
func WithPrechecked(ctx context.Context, body io.Reader) context.Context {
	if b, ok := body.(*Body); ok && b.method != nil {
		return context.WithValue(ctx, precheckedKey{}, b)
	}
	return ctx
}

// PrecheckedIs reports whether message, the message of ctx's request as
// PrecheckHTTP passed it on (WithPrechecked), has the method name; known
// is false when PrecheckHTTP did not pass it (or it has no method, or
// message is another), and the caller must read message itself. It
// spares a handler a second scan of the body.
func PrecheckedIs(ctx context.Context, message []byte, name string) (is, known bool) {
	b, ok := ctx.Value(precheckedKey{}).(*Body)
	if !ok || len(message) != len(b.b) {
		return false, false
	}
	return methodIs(b.method, name), true
}

func (h PrecheckHTTP) refusal(w http.ResponseWriter, v verdict) {
	h.Log.Debug("client message refused", "transport", "http", "code", v.code, "reason", LogSafe(v.reason))
	body := append(v.reply(), '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(body)
}

// isJSONContent reports whether a Content-Type is application/json.
func isJSONContent(ct string) bool {
	mediaType, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mediaType), "application/json")
}

// ReadAll is io.ReadAll into one buffer of the body's length, when it is
// known, rather than one grown from 512 bytes (a small body then takes a
// third of the memory).
func ReadAll(body io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(body)
	}
	buf := make([]byte, 0, length+1) // +1: the EOF is read without growing it
	for {
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			rest, err := io.ReadAll(body)
			return append(buf, rest...), err
		}
	}
}

// sanitizeUTF8 replaces invalid UTF-8 with U+FFFD, since arguments are
// forwarded as written. After the pre-check such bytes can only be inside
// strings, so the message stays valid JSON. Valid input is not copied.
func sanitizeUTF8(msg []byte) []byte {
	if utf8.Valid(msg) {
		return msg
	}
	return bytes.ToValidUTF8(msg, []byte("\uFFFD"))
}
