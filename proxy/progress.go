package proxy

import (
	"fmt"
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

// progressRouter hands each forwarded call a progress token of its own, so
// two clients using the same token never see each other's progress, and
// routes upstream progress notifications back to the right caller.
type progressRouter struct {
	mu   sync.Mutex
	next uint64
	subs map[string]ProgressFunc
}

func (p *progressRouter) register(fn ProgressFunc) (token string, release func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	token = fmt.Sprintf("mcp-router-%d", p.next)
	if p.subs == nil {
		p.subs = make(map[string]ProgressFunc)
	}
	p.subs[token] = fn
	return token, func() {
		p.mu.Lock()
		delete(p.subs, token)
		p.mu.Unlock()
	}
}

// forward delivers an upstream notifications/progress; unknown tokens
// (late, or not ours) are dropped.
func (p *progressRouter) forward(n mcp.JSONRPCNotification) {
	f := n.Params.AdditionalFields
	token := fmt.Sprint(f["progressToken"])
	p.mu.Lock()
	fn := p.subs[token]
	p.mu.Unlock()
	if fn == nil {
		return
	}
	fn(Progress{Progress: number(f["progress"]), Total: number(f["total"]), Message: text(f["message"])})
}

func number(v any) float64 {
	f, _ := v.(float64)
	return f
}

func text(v any) string {
	s, _ := v.(string)
	return s
}
