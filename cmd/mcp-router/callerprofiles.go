package main

import (
	"cmp"
	"context"
	"fmt"
	"net/http"

	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// callerProfiles serves each HTTP caller the profile its token names
// (http.tokens, http.oidc): one gateway (hub and server) per profile named,
// besides own, the server of the gateway's own profile. A caller sees and
// calls only its profile's tools, since its requests reach only its
// profile's server; sessions and handles are that server's own. The
// profiles' gateways share this one's metrics, audit log, tracing and
// state, and close with it.
func (g *gateway) callerProfiles(ctx context.Context, own *proxy.Server) (http.Handler, error) {
	cfg := g.cfg
	for i, t := range cfg.HTTP.Tokens { // the names quotas and audit records use
		g.log.Info("bearer token principal", "tokens_index", i, "principal", frontdoor.TokenFingerprint(t.Token),
			"profile", cmp.Or(t.Profile, g.prof.Name))
	}
	handlers := map[string]http.Handler{}
	for _, name := range cfg.HTTP.ServedProfiles() {
		if name == g.prof.Name {
			handlers[name] = own.HTTPHandler()
			continue
		}
		p, err := cfg.Profile(name)
		if err != nil {
			return nil, err
		}
		sib := &gateway{e: g.e, cfg: cfg, prof: p, log: g.log, metrics: g.metrics, audit: g.audit, tracing: g.tracing}
		g.onClose(sib.Close)
		if err := sib.Start(ctx); err != nil {
			return nil, fmt.Errorf("%s: profile %s: %w", cfg.File, name, err)
		}
		g.reload.follow(name, sib.hub) // edits of the file apply to it too
		srv, err := sib.server(ctx)
		if err != nil {
			return nil, err
		}
		sib.onClose(srv.Close)
		stop := context.AfterFunc(ctx, srv.CancelCalls) // at shutdown, cancel the calls in flight upstream
		sib.onClose(func() { stop() })
		handlers[name] = srv.HTTPHandler()
		g.log.Info("serving a profile to the callers it is mapped to", "profile", name, "upstreams", len(p.Upstreams))
	}
	return frontdoor.ByProfile(own.HTTPHandler(), handlers), nil
}
