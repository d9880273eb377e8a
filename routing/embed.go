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
type vecKey [sha256.Size]byte

// vectorCache holds the vectors of embedded texts for one model, in
// memory and, when it has a path, on disk.
type vectorCache struct {
	model  string
	path   string // "" = memory only
	logger *slog.Logger

	mu     sync.Mutex
	loaded bool // the file was read (or there is none)
	dims   int  // length of every vector; 0 while empty
	vecs   map[vecKey][]float32
}

// newVectorCache returns the cache of model under dir ("" for memory
// only); a nil logger is silent.
func newVectorCache(dir, model string, logger *slog.Logger) *vectorCache {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &vectorCache{model: model, logger: logger, vecs: map[vecKey][]float32{}}
	if dir != "" {
		c.path = filepath.Join(dir, cacheModelDir(model), cacheFile)
	}
	return c
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
// call reads the file.
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
// the cache has a file, rewrites it. The vectors stay cached in memory
// when writing fails. Vectors of another length than those cached mean
// the model changed under its name: the old ones are dropped.
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
	for i, k := range keys {
		c.vecs[k] = vecs[i]
	}
	if c.path == "" {
		return nil
	}
	return writeFileAtomic(c.path, encodeVectors(c.model, c.dims, c.vecs))
}

// loadLocked reads the file once; a missing file is an empty cache and a
// bad one is ignored with a warning.
func (c *vectorCache) loadLocked() {
	if c.loaded {
		return
	}
	c.loaded = true
	if c.path == "" {
		return
	}
	data, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil {
		c.dims, c.vecs, err = decodeVectors(data, c.model)
	}
	if err != nil {
		c.dims, c.vecs = 0, map[vecKey][]float32{}
		c.logger.Warn("ignoring embedding cache", "path", c.path, "err", err)
	}
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
