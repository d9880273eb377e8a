package proxy

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcp-router/mcp-router/routing"
)

// embedTimeout bounds embedding one upstream's tools.
const embedTimeout = 2 * time.Minute

// indexer keeps the router's index in step with the catalog: an upstream's
// changed tools are indexed lexically at once and embedded in the
// background (a slow Ollama must never hold up the hub).
type indexer struct {
	router *routing.Router
	logger *slog.Logger
	wake   chan struct{} // buffered 1
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	sigs    map[string]string         // upstream -> signature of its tools
	pending map[string][]routing.Tool // upstreams waiting to be embedded
}

func newIndexer(r *routing.Router, logger *slog.Logger) *indexer {
	x := &indexer{router: r, logger: logger, sigs: map[string]string{}, pending: map[string][]routing.Tool{},
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if !r.Semantic() {
		close(x.done)
		return x
	}
	ctx, cancel := context.WithCancel(context.Background())
	x.cancel = cancel
	go x.embedLoop(ctx)
	return x
}

func (x *indexer) close() {
	if x.cancel != nil {
		x.cancel()
	}
	<-x.done
}

// update re-indexes the upstreams whose tools changed in c.
func (x *indexer) update(c *Catalog) {
	byUpstream := c.RoutingTools()
	x.mu.Lock()
	defer x.mu.Unlock()
	for up := range x.sigs {
		if _, ok := byUpstream[up]; !ok {
			byUpstream[up] = nil // gone
		}
	}
	for _, up := range slices.Sorted(maps.Keys(byUpstream)) {
		tools := byUpstream[up]
		sig := toolsSignature(tools)
		if x.sigs[up] == sig {
			continue
		}
		x.sigs[up] = sig
		if tools == nil {
			delete(x.sigs, up)
		}
		x.router.SetUpstream(up, tools)
		if x.router.Semantic() {
			x.pending[up] = tools
			select {
			case x.wake <- struct{}{}:
			default:
			}
		}
	}
}

// embedRetry is how often embeddings that failed (Ollama down) are retried.
const embedRetry = 30 * time.Second

func (x *indexer) embedLoop(ctx context.Context) {
	defer close(x.done)
	tick := time.NewTicker(embedRetry)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			sctx, cancel := context.WithTimeout(ctx, embedTimeout)
			_ = x.router.SyncEmbeddings(sctx) // the semantic index logs outages
			cancel()
			continue
		case <-x.wake:
		}
		x.mu.Lock()
		work := x.pending
		x.pending = map[string][]routing.Tool{}
		x.mu.Unlock()
		for _, up := range slices.Sorted(maps.Keys(work)) {
			ectx, cancel := context.WithTimeout(ctx, embedTimeout)
			err := x.router.Embed(ectx, up, work[up])
			cancel()
			if err != nil {
				x.logger.Debug("embedding tools", "upstream", up, "err", err)
			}
		}
	}
}

// routingTool is t as the router indexes it: a domain its server declares
// replaces the upstream's.
func routingTool(t Tool) routing.Tool {
	var meta map[string]any
	if t.Def.Meta != nil {
		meta = t.Def.Meta.AdditionalFields
	}
	domain, exclusive := routing.DeclaredDomain(meta)
	if domain == "" {
		domain = t.Domain
	}
	a := t.Def.Annotations
	return routing.Tool{Name: t.Name, Upstream: t.Upstream, Domain: domain, Description: t.Def.Description,
		InputSchema: t.Def.RawInputSchema, Original: t.Original, Server: t.Server, Contract: t.Contract, Exclusive: exclusive,
		Destructive: routing.Destructive(a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint)}
}

// toolsSignature is a digest of tools as the router indexes them; a tool's
// contract stands for its description and schema, which it hashes.
func toolsSignature(tools []routing.Tool) string {
	h := sha256.New()
	var b []byte // a tool's fields, written at once: a string converted for Write escapes
	for _, t := range tools {
		b = b[:0]
		for _, f := range []string{t.Name, t.Upstream, t.Domain, t.Original, t.Server, t.Contract} {
			b = append(append(b, f...), 0)
		}
		if t.Contract == "" {
			b = append(append(append(b, t.Description...), 0), t.InputSchema...)
		}
		h.Write(b)
	}
	return string(h.Sum(nil))
}

// RoutingTools returns the catalog's tools as the router indexes them,
// grouped by upstream.
func (c *Catalog) RoutingTools() map[string][]routing.Tool {
	out := map[string][]routing.Tool{}
	for _, t := range c.Tools {
		out[t.Upstream] = append(out[t.Upstream], routingTool(t))
	}
	return out
}
