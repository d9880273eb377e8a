package metatools

// Handles carry a stateless-era client's routing state, which has no
// session to live in: minted with each answer, passed back by the model.
// A handle is signed (HMAC-SHA256 under the session key, which replicas
// share), bound to its credential, bounded and expiring; one that fails a
// check is ignored, with a note, and routing starts afresh.

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/internal/readable"
	"github.com/mcp-router/mcp-router/proxy/call"
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

type handles struct {
	key []byte
	now func() time.Time
}

func newHandles(key []byte) *handles {
	return &handles{key: key, now: time.Now}
}

// handlePayload is what a handle carries.
type handlePayload struct {
	Issued int64                `json:"t"`           // unix seconds
	Client string               `json:"c,omitempty"` // the credential's key
	State  routing.SessionState `json:"s"`
	Outage bool                 `json:"o,omitempty"` // the detour met an outage
}

func (h *handles) mint(client string, st routing.SessionState, outage bool) string {
	st.Queries = st.Queries[max(0, len(st.Queries)-maxHandleQueries):]
	for i, q := range st.Queries {
		st.Queries[i] = clip.Ellipsis(q, maxHandleQuery)
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
	errHandleExpired = errors.New("older than " + readable.Duration(handleTTL))
	errHandleClient  = errors.New("minted for another credential")
)

func (h *handles) read(client, handle string) (handlePayload, error) {
	var p handlePayload
	if len(handle) > maxHandleBytes {
		return p, errHandleTooLong
	}
	enc, sig, ok := strings.Cut(handle, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(h.sign(enc))) {
		return p, errHandleForged
	}
	// Only the canonical text of the body is accepted: one handle, one text.
	body, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil || base64.RawURLEncoding.EncodeToString(body) != enc || json.Unmarshal(body, &p) != nil {
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

// restore reads a stateless request's handle ("" for none) into a session.
func (t *Tools) restore(c *call.Call, handle string) *call.Carried {
	out := &call.Carried{}
	var st routing.SessionState
	if handle != "" {
		p, err := t.handles.read(c.Client, handle)
		if err != nil {
			out.Note = "The handle passed was ignored (" + err.Error() + "): routing goes on without the earlier context."
			t.opts.Logger.Info("handle ignored", "err", err)
		} else {
			st, out.Outage = p.State, p.Outage
		}
	}
	out.Session = t.belts.router.RestoreSession(t.belts.opts, st)
	return out
}

func handleArg(args map[string]any) (string, error) {
	switch v := args["handle"].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", errors.New(`"handle" must be the string an earlier result gave`)
}

// withHandle adds to res the handle of c's carried state: in its text,
// its _meta and, for own results, its structuredContent (a tool's own
// is left as its output schema says).
func (t *Tools) withHandle(c *call.Call, res *mcp.CallToolResult, own bool) *mcp.CallToolResult {
	carried := c.Carried
	if carried == nil || res.NeedsInput() { // a round that asks the client carries nothing else
		return res
	}
	h := t.handles.mint(c.Client, carried.Session.State(), carried.Outage)
	text := "handle: " + h + "\n(pass it back as \"handle\" to request_more_tools and call_tool: it carries this task's routing context)"
	if carried.Note != "" {
		text = carried.Note + "\n" + text
	}
	res.Content = append(res.Content, mcp.NewTextContent(text))
	if m, ok := res.StructuredContent.(map[string]any); ok && own {
		m["handle"] = h
	}
	res.Meta = cmp.Or(res.Meta, &mcp.Meta{})
	if res.Meta.AdditionalFields == nil {
		res.Meta.AdditionalFields = map[string]any{}
	}
	res.Meta.AdditionalFields[HandleMetaKey] = h
	return res
}
