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

// newRouter builds the profile's router: the lexical index always, and
// embeddings from Ollama when ollama.embed_model is set, their tool
// vectors cached in vecs (nil: in memory only). It does no I/O.
func newRouter(cfg *config.Config, prof config.Profile, log *slog.Logger, mem *lessons.Memory, vecs routing.VectorStore) (*routing.Router, error) {
	r := prof.Routing
	fusePolicy := r.Fuse
	opts := routing.RouterOptions{
		TopK: r.TopK, Threshold: r.Threshold,
		SameDomain: r.SameDomain, CrossDomain: r.CrossDomain, CollisionDelta: r.CollisionDelta,
		DiscoveryPrefixes: r.DiscoveryPrefixes, Fuse: &fusePolicy,
		SemanticWeight: r.SemanticWeight, Logger: log, Wire: cfg.Log.Wire,
		AbstainCoverage: r.AbstainCoverage, AbstainCommitment: r.AbstainCommitment, AbstainAdvice: r.AbstainAdvice, KeepCoverage: r.KeepCoverage,
	}
	if cfg.Log.Wire {
		opts.Logger = wireLogger(log)
	}
	// The file's 0 means zero; the router reads a zero option as its
	// default and a negative one as zero.
	for _, o := range []*float64{&opts.Threshold, &opts.CollisionDelta, &opts.KeepCoverage, &opts.AbstainCoverage, &opts.AbstainCommitment, &opts.AbstainAdvice, &opts.SemanticWeight} {
		if *o == 0 {
			*o = -1
		}
	}
	if opts.TopK == 0 {
		opts.TopK = -1
	}
	if mem != nil {
		opts.Lessons = mem
	}
	if cfg.Log.TraceFile != "" {
		// Left open until the process ends; writes are not buffered.
		f, err := os.OpenFile(cfg.Log.TraceFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("%s: log.trace_file: %w", cfg.File, err)
		}
		opts.Trace = f
	}
	if opts.DiscoveryPrefixes == nil {
		opts.DiscoveryPrefixes = []string{}
	}
	if cfg.Ollama.EmbedModel != "" {
		emb, err := routing.NewOllamaEmbedder(routing.OllamaOptions{URL: cfg.Ollama.URL, Model: cfg.Ollama.EmbedModel})
		if err != nil {
			return nil, err
		}
		opts.Semantic = routing.NewSemanticIndex(routing.SemanticOptions{
			Embedder: emb, Model: cfg.Ollama.EmbedModel, Logger: log, Cache: vecs,
		})
	}
	return routing.NewRouter(opts), nil
}

// sessionOptions are the per-session belt and breaker settings.
func sessionOptions(prof config.Profile) routing.SessionOptions {
	return routing.SessionOptions{
		MaxTools: prof.Routing.MaxTools, MaxDiscoveries: prof.Routing.MaxDiscoveries, ResetAfter: prof.Routing.ResetAfter,
	}
}

// newServer builds the client-facing server for the profile's routing mode.
// ended is the sessions ended on any replica (nil: ended here alone).
func newServer(cfg *config.Config, prof config.Profile, hub *proxy.Hub, log *slog.Logger, mem *lessons.Memory, vecs routing.VectorStore,
	ended proxy.EndedSessions) (*proxy.Server, error) {
	opts := proxy.ServerOptions{Hub: hub, Logger: log, Version: gatewayVersion(), CoreTools: prof.CoreTools,
		Session: sessionOptions(prof), Metrics: hub.Metrics(), Lessons: mem,
		DisconnectGrace: cfg.HTTP.ServerGrace(), RateLimit: cfg.Limits.RateLimit(),
		Executor: cfg.Limits.Executor(), Inputs: cfg.Limits.Inputs(), StdioCalls: cfg.Limits.StdioCalls}
	key, err := sessionKey(cfg)
	if err != nil {
		return nil, err
	}
	opts.SessionKey = key
	opts.EndedSessions = ended
	pl, err := newPlanner(cfg, prof, hub, log)
	if err != nil {
		return nil, err
	}
	opts.Planner = pl
	if prof.Routing.Mode != "all" {
		r, err := newRouter(cfg, prof, log, mem, vecs)
		if err != nil {
			return nil, err
		}
		opts.Router = r
	}
	return proxy.NewServer(opts), nil
}

// sessionKey is http.session_key, or nil (a key of this process) when it
// is unset.
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

// newPlanner builds the decision engine when ollama.chat_model is set;
// without one it returns nil (no plan tool).
func newPlanner(cfg *config.Config, prof config.Profile, hub *proxy.Hub, log *slog.Logger) (*planner.Planner, error) {
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
	ex := proxy.NewExecutor(hub, cfg.Limits.Executor())
	return planner.New(planner.Options{
		LLM: llm, Template: tmpl, Timeout: prof.Planner.Timeout, SensitiveTopics: prof.Planner.SensitiveTopics, Logger: log,
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

// openLessons opens the profile's experience memory over store, or returns
// nil when it is off.
func openLessons(ctx context.Context, cfg *config.Config, prof config.Profile, store lessons.Store, log *slog.Logger) (*lessons.Memory, error) {
	if !prof.Routing.Lessons {
		return nil, nil
	}
	opts := lessons.MemoryOptions{Logger: log, MaxBytes: cfg.Limits.LessonsBytes, Shared: prof.Routing.SharedLessons}
	if cfg.Ollama.EmbedModel != "" {
		emb, err := routing.NewOllamaEmbedder(routing.OllamaOptions{URL: cfg.Ollama.URL, Model: cfg.Ollama.EmbedModel})
		if err != nil {
			return nil, err
		}
		opts.Embed = cachedEmbed(emb)
	}
	mem, err := lessons.NewMemory(ctx, store, opts)
	if err != nil {
		return nil, fmt.Errorf("routing lessons: %w", err)
	}
	return mem, nil
}

// cachedEmbed embeds one text at a time with a bounded cache, for the
// lessons' similarity (a query is embedded once per decision otherwise).
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
