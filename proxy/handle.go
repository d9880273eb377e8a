package proxy

// Handles: the routing state of a client on the stateless protocol
// (2026-07-28), which has no session to keep it in. The gateway mints a
// handle with each request_more_tools answer (and each call_tool that was
// given one); the model passes it back as the "handle" argument. A handle
// is opaque to the model, signed (HMAC-SHA256 under the session key, which
// replicas share: a handle one mints, another reads), bound to the credential that got it, bounded in size, and
// expires: a handle that fails any check is ignored, with a note, and the
// request goes on with a fresh state.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/routing"
)

// HandleMetaKey is the result _meta key that holds a call's new handle.
const HandleMetaKey = "mcp-router/handle"

// Bounds of a handle.
const (
	maxHandleBytes   = 4096           // the handle as passed back
	maxHandleQueries = 4              // detour queries carried
	maxHandleQuery   = 256            // bytes of one carried query
	maxHandleGiven   = 32             // tools the detour was given
	handleTTL        = 24 * time.Hour // a handle older than this is ignored
)

// handles mints and reads handles.
type handles struct {
	key []byte
	now func() time.Time
}

func newHandles(key *SessionKey) *handles {
	return &handles{key: key.handle, now: time.Now}
}

// handlePayload is what a handle carries.
type handlePayload struct {
	Issued int64                `json:"t"`           // unix seconds
	Client string               `json:"c,omitempty"` // the credential's key
	State  routing.SessionState `json:"s"`
	Outage bool                 `json:"o,omitempty"` // the detour met an outage
}

// mint returns a handle for client carrying st.
func (h *handles) mint(client string, st routing.SessionState, outage bool) string {
	st.Queries = st.Queries[max(0, len(st.Queries)-maxHandleQueries):]
	for i, q := range st.Queries {
		st.Queries[i] = truncateUTF8(q, maxHandleQuery)
	}
	if len(st.Given) > maxHandleGiven {
		st.Given = st.Given[:maxHandleGiven]
	}
	body, _ := json.Marshal(handlePayload{Issued: h.now().Unix(), Client: client, State: st, Outage: outage})
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + h.sign(enc)
}

func (h *handles) sign(enc string) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(enc))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// Why a handle was ignored.
var (
	errHandleTooLong = fmt.Errorf("longer than %d bytes", maxHandleBytes)
	errHandleForged  = errors.New("not one this gateway minted (or minted before it restarted, or under another session key)")
	errHandleExpired = fmt.Errorf("older than %s", handleTTL)
	errHandleClient  = errors.New("minted for another credential")
)

// read checks a handle and returns what it carries.
func (h *handles) read(client, handle string) (handlePayload, error) {
	var p handlePayload
	if len(handle) > maxHandleBytes {
		return p, errHandleTooLong
	}
	enc, sig, ok := strings.Cut(handle, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(h.sign(enc))) {
		return p, errHandleForged
	}
	body, ok := decodeCanonical(enc)
	if !ok || json.Unmarshal(body, &p) != nil {
		return p, errHandleForged
	}
	if age := h.now().Sub(time.Unix(p.Issued, 0)); age > handleTTL || age < -time.Minute {
		return p, errHandleExpired
	}
	if p.Client != client {
		return p, errHandleClient
	}
	return p, nil
}

// clientKey is the context key of the credential a request came with.
type clientKey struct{}

// withClient marks ctx with a key derived from the request's credential
// (its Authorization header), which handles are bound to.
func withClient(ctx context.Context, authorization string) context.Context {
	if authorization == "" {
		return ctx
	}
	sum := sha256.Sum256([]byte(authorization))
	return context.WithValue(ctx, clientKey{}, hex.EncodeToString(sum[:8]))
}

// clientOfCtx is the key of ctx's credential: its Authorization header's
// or, behind Guard (which removes the header before the MCP server sees
// it), the principal Guard found.
func clientOfCtx(ctx context.Context) string {
	if c, _ := ctx.Value(clientKey{}).(string); c != "" {
		return c
	}
	if p := principalName(ctx); p != LocalPrincipal {
		return p
	}
	return ""
}

// stateless reports whether ctx's request is on the stateless protocol
// (2026-07-28 or later): no session, so no belt and no list_changed.
func stateless(ctx context.Context) bool { return server.IsModernRequest(ctx) }

// carried is the routing state a stateless request brought in its handle,
// for the calls it makes.
type carried struct {
	sess   *routing.Session
	outage bool
	note   string // why the handle passed was ignored, if it was
}

type carriedKey struct{}

// carriedOf returns the state ctx's request carries, or nil.
func carriedOf(ctx context.Context) *carried {
	c, _ := ctx.Value(carriedKey{}).(*carried)
	return c
}

// restore reads the handle a stateless request passed ("" for none) into
// a session of its own.
func (s *Server) restore(ctx context.Context, handle string) *carried {
	c := &carried{}
	var st routing.SessionState
	if handle != "" {
		p, err := s.handles.read(clientOfCtx(ctx), handle)
		if err != nil {
			c.note = "The handle passed was ignored (" + err.Error() + "): routing goes on without the earlier context."
			s.logger.Info("handle ignored", "err", err)
		} else {
			st, c.outage = p.State, p.Outage
		}
	}
	c.sess = s.belts.router.RestoreSession(s.belts.opts, st)
	return c
}

// mint returns the handle of c's state now.
func (s *Server) mint(ctx context.Context, c *carried) string {
	return s.handles.mint(clientOfCtx(ctx), c.sess.State(), c.outage)
}
