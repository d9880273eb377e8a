package routing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/mcp-router/mcp-router/internal/ollamaerr"
)

// Embedder turns texts into vectors. Implementations batch as they see fit.
//
// Embed returns one vector per text, in order, all of one length, or an
// error. [OllamaEmbedder] is the implementation for an Ollama server;
// tests substitute their own.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// normalizeVec scales v to unit length in place; a zero vector stays zero
// (its cosine with anything is then 0, "unrelated").
func normalizeVec(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsInf(ss, 0) || math.IsNaN(ss) {
		clear(v)
		return
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
}

// dotVec returns the dot product of a and b: their cosine when both are unit
// vectors. Vectors of different lengths (a model changed under the same
// name) have no meaningful product: dotVec returns 0.
func dotVec(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
}

// The disk cache of tool vectors lives in one directory per model under
// SemanticOptions.CacheDir, named after the model (characters other than
// ASCII letters, digits, '.', '_' and '-' become '_') and the first 8 hex
// digits of the SHA-256 of its full name, so that "nomic-embed-text" and
// "nomic-embed-text:latest" never share a file and no name escapes the
// directory. The directory holds one file, vectors.bin, little-endian:
//
//	magic     "mcprvec1"                   8 bytes
//	model     uint16 length, then the name
//	dims      uint32
//	count     uint32
//	records   count × (key [32]byte, dims × float32)
//	checksum  uint32, CRC-32C of every byte before it
//
// A key is sha256(model + "\x00" + text), text being what was embedded,
// so a changed description or a different model misses. Vectors are
// stored unit length. The file is rewritten whole (temp file, fsync,
// rename) whenever new vectors arrive, so a reader never sees half a file;
// loading is one read, one checksum and one pass over a single float
// slab (about 30 MB for 10k tools at 768 dimensions). A file that fails
// any check is ignored with one warning and replaced by the next write.
// Entries are never pruned: delete the directory to reclaim space.
const (
	cacheMagic = "mcprvec1"
	cacheFile  = "vectors.bin"
)

// vecKey is the cache key of one embedded text.
type vecKey = [sha256.Size]byte

// VectorStore persists embedded vectors, per model, by the SHA-256 of
// model and text: the shared state database, memory, or the vectors.bin
// files of earlier versions ([FileVectors]).
type VectorStore interface {
	// LoadVectors returns every vector stored for model.
	LoadVectors(model string) (map[[sha256.Size]byte][]float32, error)
	// SaveVectors adds vecs (all of one length) to model's vectors; those
	// of model with another length are dropped (the model changed under
	// its name).
	SaveVectors(model string, vecs map[[sha256.Size]byte][]float32) error
}

// vectorCache holds the vectors of embedded texts for one model, in
// memory and, when it has a store, in the store.
type vectorCache struct {
	model  string
	store  VectorStore // nil = memory only
	logger *slog.Logger

	mu     sync.Mutex
	loaded bool // the store was read (or there is none)
	dims   int  // length of every vector; 0 while empty
	vecs   map[vecKey][]float32
}

// newVectorCache returns the cache of model in vectors.bin files under
// dir ("" for memory only); a nil logger is silent.
func newVectorCache(dir, model string, logger *slog.Logger) *vectorCache {
	var store VectorStore
	if dir != "" {
		store = FileVectors(dir)
	}
	return newStoreCache(store, model, logger)
}

// newStoreCache returns the cache of model in store (nil for memory
// only); a nil logger is silent.
func newStoreCache(store VectorStore, model string, logger *slog.Logger) *vectorCache {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &vectorCache{model: model, store: store, logger: logger, vecs: map[vecKey][]float32{}}
}

// cacheModelDir returns the cache directory name for model.
func cacheModelDir(model string) string {
	clean := []byte(model)
	for i, b := range clean {
		ok := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '.' || b == '_' || b == '-'
		if !ok {
			clean[i] = '_'
		}
	}
	sum := sha256.Sum256([]byte(model))
	return fmt.Sprintf("%s-%x", ollamaerr.Shorten(string(clean), 64), sum[:4])
}

// key returns the cache key of text.
func (c *vectorCache) key(text string) vecKey {
	h := sha256.New()
	h.Write([]byte(c.model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var k vecKey
	h.Sum(k[:0])
	return k
}

// get returns the cached vector of each key, nil for a miss. The first
// call reads the store.
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

// put caches vecs (unit length, all of one length) under keys and, when
// the cache has a store, saves them there. The vectors stay cached in
// memory when saving fails. Vectors of another length than those cached
// mean the model changed under its name: the old ones are dropped.
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

// loadLocked reads the store once; an empty store is an empty cache and
// one that fails is ignored with a warning. Vectors of another length
// than the first are left out.
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

// FileVectors is the [VectorStore] of earlier versions: one vectors.bin
// file per model under a directory (layout above). The state database has
// taken its place; it remains for reading the files of earlier versions
// and for tests.
type FileVectors string

var _ VectorStore = FileVectors("")

func (d FileVectors) path(model string) string {
	return filepath.Join(string(d), cacheModelDir(model), cacheFile)
}

// LoadVectors reads model's file; a missing file is no vectors, and one
// that fails any check an error naming it.
func (d FileVectors) LoadVectors(model string) (map[vecKey][]float32, error) {
	p := d.path(model)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return map[vecKey][]float32{}, nil
	}
	if err != nil {
		return nil, err
	}
	_, vecs, err := decodeVectors(data, model)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return vecs, nil
}

// SaveVectors rewrites model's file with its vectors and vecs; a file that
// cannot be read back is replaced.
func (d FileVectors) SaveVectors(model string, vecs map[vecKey][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	var dims int
	for _, v := range vecs {
		dims = len(v)
		break
	}
	all, err := d.LoadVectors(model)
	if err != nil {
		all = map[vecKey][]float32{}
	}
	for k, v := range all {
		if len(v) != dims {
			delete(all, k)
		}
	}
	maps.Copy(all, vecs)
	return writeFileAtomic(d.path(model), encodeVectors(model, dims, all))
}

// ReadVectorFile reads a vectors.bin file written by earlier versions and
// returns the model it holds vectors of and the vectors by key.
func ReadVectorFile(path string) (string, map[[sha256.Size]byte][]float32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	head := len(cacheMagic) + 2
	if len(data) < head || string(data[:len(cacheMagic)]) != cacheMagic {
		return "", nil, fmt.Errorf("%s: not a vector cache file", path)
	}
	n := int(binary.LittleEndian.Uint16(data[len(cacheMagic):]))
	if len(data) < head+n {
		return "", nil, fmt.Errorf("%s: truncated header", path)
	}
	model := string(data[head : head+n])
	_, vecs, err := decodeVectors(data, model)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return model, vecs, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeVectors returns the cache file for vecs, records sorted by key.
func encodeVectors(model string, dims int, vecs map[vecKey][]float32) []byte {
	keys := make([]vecKey, 0, len(vecs))
	for k := range vecs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b vecKey) int { return bytes.Compare(a[:], b[:]) })
	size := len(cacheMagic) + 2 + len(model) + 8 + len(keys)*(sha256.Size+4*dims) + 4
	b := make([]byte, 0, size)
	b = append(b, cacheMagic...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(model)))
	b = append(b, model...)
	b = binary.LittleEndian.AppendUint32(b, uint32(dims))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(keys)))
	for _, k := range keys {
		b = append(b, k[:]...)
		for _, x := range vecs[k] {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeVectors parses a cache file written for model. The vectors share
// one backing array.
func decodeVectors(data []byte, model string) (int, map[vecKey][]float32, error) {
	head := len(cacheMagic) + 2
	if len(data) < head+8+4 || string(data[:len(cacheMagic)]) != cacheMagic {
		return 0, nil, errors.New("not a vector cache file")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return 0, nil, errors.New("checksum mismatch")
	}
	n := int(binary.LittleEndian.Uint16(data[len(cacheMagic):]))
	if len(body) < head+n+8 {
		return 0, nil, errors.New("truncated header")
	}
	if got := string(body[head : head+n]); got != model {
		return 0, nil, fmt.Errorf("written for model %q", got)
	}
	p := body[head+n:]
	dims, count := int(binary.LittleEndian.Uint32(p)), int(binary.LittleEndian.Uint32(p[4:]))
	p = p[8:]
	if uint64(len(p)) != uint64(count)*(sha256.Size+4*uint64(dims)) || (dims == 0) != (count == 0) {
		return 0, nil, fmt.Errorf("%d records of %d dimensions do not fill %d bytes", count, dims, len(p))
	}
	slab := make([]float32, count*dims)
	vecs := make(map[vecKey][]float32, count)
	for i := range count {
		var k vecKey
		p = p[copy(k[:], p):]
		v := slab[i*dims : (i+1)*dims : (i+1)*dims]
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*j:]))
		}
		p = p[4*dims:]
		vecs[k] = v
	}
	return dims, vecs, nil
}

// writeFileAtomic replaces path with data: it writes a temporary file in
// the same directory, syncs it and renames it over path.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".vectors-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
