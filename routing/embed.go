package routing

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync"
)

// Embedder turns texts into vectors: one per text, in order, all of one
// length. [OllamaEmbedder] is the implementation for an Ollama server.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// vecKey is the cache key of one embedded text.
type vecKey = [sha256.Size]byte

// VectorStore persists embedded vectors per model, by the SHA-256 of
// model and text.
type VectorStore interface {
	// LoadVectors returns every vector stored for model.
	LoadVectors(model string) (map[[sha256.Size]byte][]float32, error)
	// SaveVectors adds vecs (all of one length) to model's, dropping those
	// of another length (the model changed under its name).
	SaveVectors(model string, vecs map[[sha256.Size]byte][]float32) error
}

// vectorCache holds one model's vectors in memory and in its store.
type vectorCache struct {
	model  string
	store  VectorStore // nil = memory only
	logger *slog.Logger

	mu     sync.Mutex
	loaded bool // the store was read (or there is none)
	dims   int  // length of every vector; 0 while empty
	vecs   map[vecKey][]float32
}

// newStoreCache returns the cache of model in store (nil: memory only).
func newStoreCache(store VectorStore, model string, logger *slog.Logger) *vectorCache {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &vectorCache{model: model, store: store, logger: logger, vecs: map[vecKey][]float32{}}
}

// key returns the cache key of text.
func (c *vectorCache) key(text string) vecKey {
	return sha256.Sum256([]byte(c.model + "\x00" + text))
}

// get returns the cached vector of each key, nil for a miss.
func (c *vectorCache) get(keys []vecKey) [][]float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	out := make([][]float32, len(keys))
	for i, k := range keys {
		out[i] = c.vecs[k]
	}
	return out
}

// put caches vecs under keys and saves them in the store; vectors of
// another length than those cached mean the model changed: the old go.
func (c *vectorCache) put(keys []vecKey, vecs [][]float32) error {
	if len(keys) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loadLocked()
	if d := len(vecs[0]); d != c.dims {
		if c.dims != 0 {
			c.logger.Info("embedding dimensions changed, dropping cached vectors", "model", c.model, "from", c.dims, "to", d)
		}
		c.dims, c.vecs = d, map[vecKey][]float32{}
	}
	added := make(map[vecKey][]float32, len(keys))
	for i, k := range keys {
		c.vecs[k] = vecs[i]
		added[k] = vecs[i]
	}
	if c.store == nil {
		return nil
	}
	return c.store.SaveVectors(c.model, added)
}

// loadLocked reads the store once, leaving out vectors of another length
// than the first.
func (c *vectorCache) loadLocked() {
	if c.loaded {
		return
	}
	c.loaded = true
	if c.store == nil {
		return
	}
	vecs, err := c.store.LoadVectors(c.model)
	if err != nil {
		c.logger.Warn("ignoring embedding cache", "model", c.model, "err", err)
		return
	}
	for k, v := range vecs {
		if c.dims == 0 {
			c.dims = len(v)
		}
		if len(v) == c.dims {
			c.vecs[k] = v
		}
	}
}
