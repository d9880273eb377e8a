package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/routing"
)

// callerProfiles serves each HTTP caller the profile its token names
// (http.tokens, http.oidc): one hub and one server per profile named,
// besides own, the server of the gateway's own profile. A caller sees and
// calls only its profile's tools, since its requests reach only its
// profile's server; sessions and handles are that server's own. close
// ends the extra servers and hubs.
func (e *env) callerProfiles(ctx context.Context, cfg *config.Config, prof config.Profile, own *proxy.Server,
	vecs routing.VectorStore, log *slog.Logger) (_ http.Handler, closeAll func(), err error) {
	handlers := map[string]http.Handler{}
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	for i, t := range cfg.HTTP.Tokens { // the names quotas and audit records use
		log.Info("bearer token principal", "tokens_index", i, "principal", frontdoor.TokenFingerprint(t.Token),
			"profile", cmp.Or(t.Profile, prof.Name))
	}
	for _, name := range cfg.HTTP.ServedProfiles() {
		if name == prof.Name {
			handlers[name] = own.HTTPHandler()
			continue
		}
		p, err := cfg.Profile(name)
		if err != nil {
			return nil, nil, err
		}
		hub, err := e.newHub(ctx, cfg, p, log)
		if err != nil {
			return nil, nil, err
		}
		if err := hub.Launch(ctx); err != nil {
			return nil, nil, fmt.Errorf("%s: profile %s: %w", cfg.File, name, err)
		}
		closers = append(closers, func() { _ = hub.Close() })
		hub.AwaitBuiltins(ctx)
		e.reload.follow(name, hub) // edits of the file apply to it too
		srv, err := newServer(cfg, p, hub, log, nil, vecs, e.endedSessions(ctx, cfg, log))
		if err != nil {
			return nil, nil, err
		}
		stop := context.AfterFunc(ctx, srv.CancelCalls) // at shutdown, cancel the calls in flight upstream
		closers = append(closers, func() { stop(); srv.Close() })
		handlers[name] = srv.HTTPHandler()
		log.Info("serving a profile to the callers it is mapped to", "profile", name, "upstreams", len(p.Upstreams))
	}
	return frontdoor.ByProfile(own.HTTPHandler(), handlers), closeAll, nil
}
