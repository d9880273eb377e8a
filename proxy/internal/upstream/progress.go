package upstream

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// Progress is one progress report from an upstream, for the caller's own
// progress token.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

// ProgressFunc receives progress for one call. It must not block.
type ProgressFunc func(Progress)

// ProgressRouter hands each forwarded call a progress token of its own and
// routes upstream progress notifications back to the right caller. Tokens
// are random and bound to the call's upstream, so that no upstream can
// report progress for another's calls.
type ProgressRouter struct {
	mu   sync.Mutex
	subs map[string]progressSub
}

// progressSub is who hears of one token's progress.
type progressSub struct {
	upstream string       // the only upstream whose reports count
	fn       ProgressFunc // nil when the caller asked for none
	touch    func()       // nil until the call is sent
}

// Register hands out a token for a call to upstream whose progress goes
// to fn (which may be nil).
func (p *ProgressRouter) Register(upstream string, fn ProgressFunc) (token string, release func()) {
	return p.register(progressSub{upstream: upstream, fn: fn})
}

// tokenPrefix begins every token Register hands out.
const tokenPrefix = "mcp-router-"

// register hands out a token for sub.
func (p *ProgressRouter) register(sub progressSub) (token string, release func()) {
	var random [12]byte
	_, _ = rand.Read(random[:]) // crypto/rand.Read never fails
	token = tokenPrefix + hex.EncodeToString(random[:])
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.subs == nil {
		p.subs = make(map[string]progressSub)
	}
	p.subs[token] = sub
	return token, func() {
		p.mu.Lock()
		delete(p.subs, token)
		p.mu.Unlock()
	}
}

// watch calls touch on each progress report for token (one Register
// handed out) until release. A call without one gets a token all the
// same, so that an upstream that reports progress is not cut by the idle
// timeout.
func (p *ProgressRouter) watch(upstream string, token mcp.ProgressToken, touch func()) (_ mcp.ProgressToken, release func()) {
	if token == nil {
		return p.register(progressSub{upstream: upstream, touch: touch})
	}
	return token, p.onReport(tokenKey(token), touch)
}

// tokenKey is a token as the router keys it: as fmt prints it.
func tokenKey(token any) string {
	if s, ok := token.(string); ok {
		return s
	}
	return fmt.Sprint(token)
}

// onReport calls touch on each progress report for token until release.
func (p *ProgressRouter) onReport(token string, touch func()) (release func()) {
	set := func(touch func()) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if sub, ok := p.subs[token]; ok {
			sub.touch = touch
			p.subs[token] = sub
		}
	}
	set(touch)
	return func() { set(nil) }
}

// forward delivers a notifications/progress from upstream; unknown tokens
// (late, or not ours) and another upstream's tokens are dropped.
func (p *ProgressRouter) forward(upstream string, n mcp.JSONRPCNotification) {
	f := n.Params.AdditionalFields
	token := tokenKey(f["progressToken"])
	p.mu.Lock()
	sub := p.subs[token]
	p.mu.Unlock()
	if sub.upstream != upstream {
		return
	}
	if sub.touch != nil {
		sub.touch()
	}
	if sub.fn != nil {
		msg, _ := f["message"].(string)
		sub.fn(Progress{Progress: number(f["progress"]), Total: number(f["total"]), Message: msg})
	}
}

// number reads a progress value: from JSON, or the Go number an
// in-process server passed.
func number(v any) float64 {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	switch r := reflect.ValueOf(v); {
	case r.CanFloat():
		return r.Float()
	case r.CanInt():
		return float64(r.Int())
	case r.CanUint():
		return float64(r.Uint())
	}
	return 0
}
