package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/prompts"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// router builds the profile's router: the lexical index always, and embeddings from Ollama when
// ollama.embed_model is set, their tool vectors cached in the state. It does no I/O but open
// log.trace_file.
func (g *gateway) router(ctx context.Context) (*routing.Router, error) {
	cfg := g.cfg
	opts := g.prof.Routing.RouterOptions
	opts.Logger, opts.Wire = g.log, cfg.Log.Wire
	if cfg.Log.Wire {
		opts.Logger = wireLogger(g.log)
	}
	if g.mem != nil {
		opts.Lessons = g.mem
	}
	if cfg.Log.TraceFile != "" {
		// Left open until the process ends; writes are not buffered.
		f, err := os.OpenFile(cfg.Log.TraceFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("%s: log.trace_file: %w", cfg.File, err)
		}
		opts.Trace = f
	}
	if cfg.Ollama.EmbedModel != "" {
		emb, err := routing.NewOllamaEmbedder(routing.OllamaOptions{URL: cfg.Ollama.URL, Model: cfg.Ollama.EmbedModel})
		if err != nil {
			return nil, err
		}
		opts.Semantic = routing.NewSemanticIndex(routing.SemanticOptions{
			Embedder: emb, Model: cfg.Ollama.EmbedModel, Logger: g.log, Cache: g.state(ctx).Vectors(),
		})
	}
	return routing.NewRouter(opts), nil
}

// server builds the client-facing server of the gateway's hub for the profile's routing mode.
func (g *gateway) server(ctx context.Context) (*proxy.Server, error) {
	cfg, prof := g.cfg, g.prof
	opts := proxy.ServerOptions{Hub: g.hub, Logger: g.log, Version: gatewayVersion(), CoreTools: prof.CoreTools,
		Session: routing.SessionOptions{MaxTools: prof.Routing.MaxTools, MaxDiscoveries: prof.Routing.MaxDiscoveries,
			ResetAfter: prof.Routing.ResetAfter},
		Metrics: g.hub.Metrics(), Lessons: g.mem,
		DisconnectGrace: cfg.HTTP.DisconnectGrace, RateLimit: cfg.Limits.RateLimit,
		Executor: cfg.Limits.Plan, Inputs: cfg.Limits.Inputs, StdioCalls: cfg.Limits.StdioCalls}
	key, err := sessionKey(cfg)
	if err != nil {
		return nil, err
	}
	opts.SessionKey = key
	if cfg.State.URL != "" { // the sessions ended on any replica
		opts.EndedSessions = g.state(ctx).EndedSessions()
	}
	if opts.Planner, err = g.planner(); err != nil {
		return nil, err
	}
	if prof.Routing.Mode != "all" {
		if opts.Router, err = g.router(ctx); err != nil {
			return nil, err
		}
	}
	return proxy.NewServer(opts), nil
}

// sessionKey is http.session_key, or nil (a key of this process) when it is unset.
func sessionKey(cfg *config.Config) (*proxy.SessionKey, error) {
	if cfg.HTTP.SessionKey == "" {
		return nil, nil
	}
	key, err := proxy.ParseSessionKey(cfg.HTTP.SessionKey)
	if err != nil {
		return nil, fmt.Errorf("%s: http.session_key: %w", cfg.File, err)
	}
	return key, nil
}

func warnMissingCore(hub *proxy.Hub, prof config.Profile, log *slog.Logger) {
	for _, name := range prof.CoreTools {
		if _, ok := hub.Catalog().Tool(name); !ok {
			log.Warn("core tool not in the catalog (yet)", "tool", name, "profile", prof.Name)
		}
	}
}

// planner builds the decision engine when ollama.chat_model is set; without one it returns nil (no
// plan tool).
func (g *gateway) planner() (*planner.Planner, error) {
	cfg, prof := g.cfg, g.prof
	if cfg.Ollama.ChatModel == "" {
		return nil, nil
	}
	llm, err := planner.NewOllamaLLM(planner.OllamaOptions{URL: cfg.Ollama.URL, Model: cfg.Ollama.ChatModel})
	if err != nil {
		return nil, fmt.Errorf("%s: ollama: %w", cfg.File, err)
	}
	tmpl, err := prompts.Load("decide", prof.Planner.Prompt)
	if err != nil {
		return nil, fmt.Errorf("%s: profiles.%s.planner.prompt: %w", cfg.File, prof.Name, err)
	}
	ex := proxy.NewExecutor(g.hub, cfg.Limits.Plan)
	return planner.New(planner.Options{
		LLM: llm, Template: tmpl, Timeout: prof.Planner.Timeout, SensitiveTopics: prof.Planner.SensitiveTopics, Logger: g.log,
		Validate: func(raw json.RawMessage) error {
			p, err := executor.Decode(raw)
			if err != nil {
				return err
			}
			_, err = ex.Validate(p)
			return err
		},
	}), nil
}

// executor runs plans on the gateway's hub within the limits.
func (g *gateway) executor() *executor.Executor {
	opts := g.cfg.Limits.Plan
	opts.Logger = g.log
	return proxy.NewExecutor(g.hub, opts)
}

// openLessons opens the profile's experience memory over the state, when routing.lessons is on.
func (g *gateway) openLessons(ctx context.Context) error {
	cfg, prof := g.cfg, g.prof
	if !prof.Routing.Lessons {
		return nil
	}
	opts := lessons.MemoryOptions{Logger: g.log, MaxBytes: cfg.Limits.LessonsBytes, Shared: prof.Routing.SharedLessons}
	if cfg.Ollama.EmbedModel != "" {
		emb, err := routing.NewOllamaEmbedder(routing.OllamaOptions{URL: cfg.Ollama.URL, Model: cfg.Ollama.EmbedModel})
		if err != nil {
			return err
		}
		opts.Embed = cachedEmbed(emb)
	}
	mem, err := lessons.NewMemory(ctx, g.state(ctx).Lessons(), opts)
	if err != nil {
		return fmt.Errorf("routing lessons: %w", err)
	}
	g.mem = mem
	return nil
}

// cachedEmbed embeds one text at a time with a bounded cache, for the lessons' similarity (a query
// is embedded once per decision otherwise).
func cachedEmbed(e routing.Embedder) func(context.Context, string) ([]float32, error) {
	const size = 512
	var mu sync.Mutex
	cache := map[string][]float32{}
	return func(ctx context.Context, text string) ([]float32, error) {
		mu.Lock()
		v, ok := cache[text]
		mu.Unlock()
		if ok {
			return v, nil
		}
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		vs, err := e.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		if len(cache) >= size {
			clear(cache)
		}
		cache[text] = vs[0]
		mu.Unlock()
		return vs[0], nil
	}
}
