package proxy

// Sealed sessions: a 2025-11-25 session id is the session's state (its
// principal, when it opened, and the client's initialize), sealed with
// AES-GCM under the session key, so that any replica holding the key can
// resume it by replaying that initialize to its own MCP server. A DELETE
// ends a session for good, on every replica with EndedSessions.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// Bounds of a sealed session id.
const (
	maxSealedIDBytes    = 2048            // an id as sent back
	maxSealedCapsBytes  = 1024            // the client capabilities carried
	maxSealedClientName = 128             // bytes of the client's name and of its version
	sealedSessionMaxAge = 24 * time.Hour  // an older id is not resumed
	maxEndedSessions    = 100_000         // terminated ids remembered
	endedStoreTimeout   = 5 * time.Second // a write or a lookup of the shared ended sessions
	endedClockSkew      = 5 * time.Minute // a shared record outlives its id by this, for replicas whose clocks are behind
)

// EndedSessions records the sessions clients ended (DELETE) for every
// gateway that shares it, by the SHA-256 of their ids.
type EndedSessions interface {
	// End records the session hashed to key, of owner, as ended until
	// until, and drops the records expired at now.
	End(ctx context.Context, key [32]byte, owner string, until, now time.Time) error
	// Ended reports whether the session hashed to key is ended at now.
	Ended(ctx context.Context, key [32]byte, now time.Time) (bool, error)
}

// sealedSession is what a sealed session id carries.
type sealedSession struct {
	Version   int             `json:"v"`
	Principal string          `json:"p"`
	Issued    int64           `json:"t"` // unix seconds
	Random    []byte          `json:"r"` // with the nonce, the id's entropy
	Protocol  string          `json:"pv,omitempty"`
	Client    *clientInfo     `json:"ci,omitempty"`
	Caps      json.RawMessage `json:"cc,omitempty"`
}

type clientInfo struct {
	Name    string `json:"n,omitempty"`
	Version string `json:"v,omitempty"`
}

// Why a session id is not resumed.
var (
	errSessionNotLive   = errors.New("unknown or terminated session id")
	errSessionForged    = errors.New("not a session id this gateway issued (or issued under another session key)")
	errSessionPrincipal = errors.New("a session of another principal")
	errSessionOld       = fmt.Errorf("opened more than %s ago", sealedSessionMaxAge)
	errSessionEnded     = errors.New("terminated")
	errSessionUnchecked = errors.New("whether it was terminated could not be looked up")
)

// sealedIDs issues sealed session ids and keeps those live here; it is
// the streamable HTTP server's session id manager.
type sealedIDs struct {
	key    *SessionKey
	now    func() time.Time
	shared EndedSessions // nil: a DELETE ends a session in this process alone
	log    *slog.Logger

	mu    sync.Mutex
	live  map[string]struct{}
	ended map[string]time.Time // terminated ids, until they are too old to resume
}

var _ server.SessionIdManagerResolver = (*sealedIDs)(nil)

func newSealedIDs(key *SessionKey) *sealedIDs {
	return &sealedIDs{key: key, now: time.Now, log: slog.New(slog.DiscardHandler), live: map[string]struct{}{}, ended: map[string]time.Time{}}
}

// ResolveSessionIdManager returns the manager for r (nil in an idle sweep).
func (s *sealedIDs) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	return sealedIDManager{ids: s, r: r}
}

// resumeIDKey marks a replayed initialize's context with the id it
// resumes: mcp-go hands the id manager only the *http.Request.
type resumeIDKey struct{}

type sealedIDManager struct {
	ids *sealedIDs
	r   *http.Request
}

// Generate seals a new session for the request's principal and
// initialize, or returns the id a replayed initialize resumes.
func (m sealedIDManager) Generate() string {
	p := sealedSession{Version: 1, Principal: LocalPrincipal, Issued: m.ids.now().Unix(), Random: make([]byte, 8)}
	_, _ = rand.Read(p.Random)
	if m.r != nil { // mcp-go generates ids for requests alone
		if id, ok := m.r.Context().Value(resumeIDKey{}).(string); ok {
			m.ids.setLive(id)
			return id
		}
		p.Principal = principalName(m.r.Context())
		p.fromInitialize(m.r)
	}
	body, _ := json.Marshal(p)
	id := m.ids.key.sealText(body)
	if len(id) > maxSealedIDBytes { // cannot happen with the bounds above; kept small regardless
		p.Caps, p.Client = nil, nil
		body, _ = json.Marshal(p)
		id = m.ids.key.sealText(body)
	}
	m.ids.setLive(id)
	return id
}

// Validate accepts the ids live here (resumeHTTP makes a sealed id live).
func (m sealedIDManager) Validate(sessionID string) (isTerminated bool, err error) {
	if !m.ids.isLive(sessionID) {
		return false, errSessionNotLive
	}
	return false, nil
}

// Terminate forgets the id here. A DELETE also ends it for good, here and
// in the shared ended sessions (if that write fails, so does the DELETE);
// an idle sweep does not, so the client's next request resumes it.
func (m sealedIDManager) Terminate(sessionID string) (isNotAllowed bool, err error) {
	deleted := m.r != nil && m.r.Method == http.MethodDelete
	if deleted && m.ids.shared != nil {
		if err := m.ids.endShared(m.r.Context(), sessionID, principalName(m.r.Context())); err != nil {
			m.ids.log.Warn("session not ended: the shared state could not record it", "err", err)
			return false, errors.New("the session could not be ended on every replica; try again")
		}
	}
	m.ids.forget(sessionID, deleted)
	return false, nil
}

// endShared records id as ended in the shared ended sessions until no
// replica would resume it. An id no replica would resume for principal is
// not recorded: a DELETE of made-up ids writes nothing.
func (s *sealedIDs) endShared(ctx context.Context, id, principal string) error {
	p, err := s.unseal(id, principal)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, endedStoreTimeout)
	defer cancel()
	until := time.Unix(p.Issued, 0).Add(sealedSessionMaxAge + endedClockSkew)
	return s.shared.End(ctx, sha256.Sum256([]byte(id)), p.Principal, until, s.now())
}

func (s *sealedIDs) setLive(id string) {
	s.mu.Lock()
	s.live[id] = struct{}{}
	s.mu.Unlock()
}

func (s *sealedIDs) isLive(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.live[id]
	return ok
}

func (s *sealedIDs) forget(id string, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
	if !ended {
		return
	}
	now := s.now()
	if len(s.ended) >= maxEndedSessions {
		for k, until := range s.ended {
			if now.After(until) || len(s.ended) >= maxEndedSessions {
				delete(s.ended, k)
			}
		}
	}
	s.ended[id] = now.Add(sealedSessionMaxAge)
}

// open reads a sealed id that is not live here, for principal ("" for
// any), and looks it up in the shared ended sessions: an id that cannot be
// looked up is not resumed.
func (s *sealedIDs) open(ctx context.Context, id, principal string) (sealedSession, error) {
	p, err := s.unseal(id, principal)
	if err != nil {
		return p, err
	}
	s.mu.Lock()
	_, ended := s.ended[id]
	s.mu.Unlock()
	if ended {
		return p, errSessionEnded
	}
	if s.shared == nil {
		return p, nil
	}
	ctx, cancel := context.WithTimeout(ctx, endedStoreTimeout)
	defer cancel()
	ended, err = s.shared.Ended(ctx, sha256.Sum256([]byte(id)), s.now())
	switch {
	case err != nil:
		s.log.Warn("session not resumed: the shared state could not say whether it was ended", "err", err)
		return p, errSessionUnchecked
	case ended: // for good: remembered here, not looked up again
		s.forget(id, true)
		return p, errSessionEnded
	}
	return p, nil
}

// unseal reads a sealed id for principal ("" for any) and checks its age.
func (s *sealedIDs) unseal(id, principal string) (sealedSession, error) {
	var p sealedSession
	if len(id) > maxSealedIDBytes {
		return p, errSessionForged
	}
	body, ok := s.key.openText(id)
	if !ok || json.Unmarshal(body, &p) != nil || p.Version != 1 {
		return p, errSessionForged
	}
	if principal != "" && p.Principal != principal {
		return p, errSessionPrincipal
	}
	if age := s.now().Sub(time.Unix(p.Issued, 0)); age > sealedSessionMaxAge || age < -time.Minute {
		return p, errSessionOld
	}
	return p, nil
}

// fromInitialize keeps, within bounds, what r's initialize says of its
// client; r's body is left to be read again.
func (p *sealedSession) fromInitialize(r *http.Request) {
	body := requestBody(r)
	var msg struct {
		Params struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities"`
			ClientInfo      struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"clientInfo"`
		} `json:"params"`
	}
	if body == nil || json.Unmarshal(body, &msg) != nil {
		return
	}
	if v := msg.Params.ProtocolVersion; len(v) <= 32 {
		p.Protocol = v
	}
	ci := msg.Params.ClientInfo
	if ci.Name != "" || ci.Version != "" {
		p.Client = &clientInfo{Name: clip.Ellipsis(ci.Name, maxSealedClientName), Version: clip.Ellipsis(ci.Version, maxSealedClientName)}
	}
	var compact bytes.Buffer
	if len(msg.Params.Capabilities) <= 4*maxSealedCapsBytes && json.Compact(&compact, msg.Params.Capabilities) == nil && compact.Len() <= maxSealedCapsBytes {
		p.Caps = compact.Bytes()
	}
}

// requestBody returns r's buffered body without consuming it, or nil.
func requestBody(r *http.Request) []byte {
	if r.GetBody == nil {
		return nil
	}
	rc, err := r.GetBody()
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil
	}
	return b
}

// SessionOwner names the principal a session id was sealed for, when any
// replica under the same session key issued it and may still resume it;
// Guard uses it for sessions it has not seen.
func (s *Server) SessionOwner(ctx context.Context, sessionID string) (principal string, ok bool) {
	p, err := s.ids.open(ctx, sessionID, "")
	return p.Principal, err == nil
}

// resumeHTTP resumes a 2025-11-25 session whose id is sealed but not live
// in this process, before next sees the request.
type resumeHTTP struct {
	next http.Handler // the whole chain
	mcp  http.Handler // the MCP server, for the replayed initialize
	ids  *sealedIDs
	log  *slog.Logger

	mu *sync.Mutex // one resume at a time: two requests of one session resume it once
}

func (h resumeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	switch {
	case sid == "":
		if r.Method == http.MethodPost && r.GetBody == nil && r.Body != nil {
			// Buffered so that an initialize can be read twice (Guard does
			// it already; this is for a bare handler).
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, wire.MaxMessageBytes))
			if err != nil {
				frontdoor.WriteRefusal(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", wire.MaxMessageBytes))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		}
	case !isModernHeader(r) && !h.ids.isLive(sid):
		h.resume(r, sid)
	}
	h.next.ServeHTTP(w, r)
}

// isModernHeader reports whether r is on the stateless protocol, which
// ignores session ids.
func isModernHeader(r *http.Request) bool {
	return r.Header.Get("MCP-Protocol-Version") >= mcp.ProtocolVersion20260728
}

// resume replays the initialize sealed in sid to the MCP server, so that
// the session is live here; on failure the MCP server answers 404 as for
// any unknown session.
func (h resumeHTTP) resume(r *http.Request, sid string) {
	sess, err := h.ids.open(r.Context(), sid, principalName(r.Context()))
	if err != nil {
		h.log.Debug("session not resumed", "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids.isLive(sid) {
		return
	}
	ctx := context.WithValue(r.Context(), resumeIDKey{}, sid)
	init, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": sess.initializeParams()})
	rec := h.replay(ctx, r, init, "")
	if rec.status != http.StatusOK || rec.header.Get(server.HeaderKeySessionID) != sid {
		h.log.Warn("session not resumed: the replayed initialize failed", "status", rec.status)
		return
	}
	done, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if rec := h.replay(ctx, r, done, sid); rec.status != http.StatusAccepted && rec.status != http.StatusOK {
		h.log.Warn("resumed session: notifications/initialized refused", "status", rec.status)
	}
	h.log.Info("session resumed from its sealed id", "principal", sess.Principal, "age", h.ids.now().Sub(time.Unix(sess.Issued, 0)).Round(time.Second))
}

// initializeParams are the params of the initialize the session began with.
func (p sealedSession) initializeParams() map[string]any {
	params := map[string]any{"protocolVersion": cmp.Or(p.Protocol, mcp.LATEST_PROTOCOL_VERSION), "capabilities": json.RawMessage(`{}`),
		"clientInfo": map[string]string{"name": "resumed", "version": ""}}
	if len(p.Caps) > 0 {
		params["capabilities"] = p.Caps
	}
	if p.Client != nil {
		params["clientInfo"] = map[string]string{"name": p.Client.Name, "version": p.Client.Version}
	}
	return params
}

// replay POSTs body to the MCP server on r's path and records the answer.
func (h resumeHTTP) replay(ctx context.Context, r *http.Request, body []byte, sid string) *replayRecorder {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.URL.String(), bytes.NewReader(body))
	req.Host = r.Host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" {
		req.Header.Set("MCP-Protocol-Version", v)
	}
	if sid != "" {
		req.Header.Set(server.HeaderKeySessionID, sid)
	}
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	rec := &replayRecorder{header: http.Header{}}
	h.mcp.ServeHTTP(rec, req)
	return rec
}

// replayRecorder keeps the status and headers of a replayed request.
type replayRecorder struct {
	header http.Header
	status int
}

func (w *replayRecorder) Header() http.Header { return w.header }

func (w *replayRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *replayRecorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(b), nil
}

// The session key is a secret the replicas of one gateway share, so that
// what one hands a client is accepted by every other; unset, each process
// draws its own.

// SessionKeyBytes is the length of a session key.
const SessionKeyBytes = 32

// SessionKey seals session ids (AES-256-GCM) and signs handles
// (HMAC-SHA256), each under its own key derived from one secret.
type SessionKey struct {
	seal   cipher.AEAD
	handle []byte
}

// NewSessionKey derives the keys of secret, which must be
// SessionKeyBytes long.
func NewSessionKey(secret []byte) (*SessionKey, error) {
	if len(secret) != SessionKeyBytes {
		return nil, fmt.Errorf("the key is %d bytes, want %d", len(secret), SessionKeyBytes)
	}
	sealKey, err := hkdf.Key(sha256.New, secret, nil, "mcp-router session id", 32)
	if err != nil {
		return nil, err
	}
	handleKey, err := hkdf.Key(sha256.New, secret, nil, "mcp-router handle", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(sealKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &SessionKey{seal: aead, handle: handleKey}, nil
}

// ParseSessionKey reads a key written in base64 (standard or URL
// alphabet, padded or not), as `openssl rand -base64 32` prints one.
func ParseSessionKey(text string) (*SessionKey, error) {
	text = strings.TrimSpace(text)
	var secret []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if secret, err = enc.DecodeString(text); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("not base64 (make one with: openssl rand -base64 %d)", SessionKeyBytes)
	}
	return NewSessionKey(secret)
}

// RandomSessionKey returns a key of this process alone.
func RandomSessionKey() *SessionKey {
	secret := make([]byte, SessionKeyBytes)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails
	k, err := NewSessionKey(secret)
	if err != nil {
		panic(err) // the length is right by construction
	}
	return k
}

// sealText encrypts and authenticates plain into URL-safe text.
func (k *SessionKey) sealText(plain []byte) string {
	nonce := make([]byte, k.seal.NonceSize(), k.seal.NonceSize()+len(plain)+k.seal.Overhead())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(k.seal.Seal(nonce, nonce, plain, nil))
}

// openText reverses sealText; any change to the text fails.
func (k *SessionKey) openText(text string) ([]byte, bool) {
	raw, ok := decodeCanonical(text)
	if !ok || len(raw) < k.seal.NonceSize()+k.seal.Overhead() {
		return nil, false
	}
	n := k.seal.NonceSize()
	plain, err := k.seal.Open(nil, raw[:n], raw[n:], nil)
	return plain, err == nil
}

// decodeCanonical decodes text in the one spelling the gateway writes
// tokens in (unpadded base64url, no trailing bits set), so that whatever
// is keyed by a token's text meets every copy of it (class 9 in
// docs/reliability.md).
func decodeCanonical(text string) ([]byte, bool) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != text {
		return nil, false
	}
	return raw, true
}
