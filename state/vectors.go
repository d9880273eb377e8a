package state

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/mcp-router/mcp-router/routing"
)

// Vectors returns the routing.VectorStore in the database.
func (s stores) Vectors() routing.VectorStore { return vectorStore(s) }

type vectorStore struct{ b engine }

type vecKey = [sha256.Size]byte

// LoadVectors returns every vector stored for model.
func (s vectorStore) LoadVectors(model string) (map[vecKey][]float32, error) {
	ctx, cancel := s.b.noCtx() // the VectorStore interface has no context, like the cache calling it
	defer cancel()
	rows, err := s.b.conn.query(ctx, `SELECT key, vec FROM vectors WHERE model = ?`, model)
	if err != nil {
		return nil, fmt.Errorf("reading vectors of %s from %s: %w", model, s.b.name, err)
	}
	defer rows.Close()
	out := map[vecKey][]float32{}
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("reading vectors of %s from %s: %w", model, s.b.name, err)
		}
		if len(k) != sha256.Size || len(v)%4 != 0 {
			continue // not written by this package; the model re-embeds it
		}
		out[vecKey(k)] = decodeVec(v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading vectors of %s from %s: %w", model, s.b.name, err)
	}
	return out, nil
}

// vectorsPerInsert is how many vectors one INSERT writes (3 parameters
// each, within both databases' limits).
const vectorsPerInsert = 256

// SaveVectors adds vecs to model's vectors and drops those of another
// length, in one transaction.
func (s vectorStore) SaveVectors(model string, vecs map[vecKey][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	ctx, cancel := s.b.noCtx()
	defer cancel()
	err := s.b.write(ctx, func(c conn) error {
		var dims int
		for _, v := range vecs {
			dims = len(v)
			break
		}
		if _, err := c.exec(ctx, `DELETE FROM vectors WHERE model = ? AND length(vec) != ?`, model, 4*dims); err != nil {
			return err
		}
		for chunk := range slices.Chunk(slices.Collect(maps.Keys(vecs)), vectorsPerInsert) {
			args := make([]any, 0, 3*len(chunk))
			for _, k := range chunk {
				args = append(args, model, k[:], encodeVec(vecs[k]))
			}
			rows := valueRows(len(chunk), 3)
			if _, err := c.exec(ctx, `INSERT INTO vectors (model, key, vec) VALUES `+rows+`
				ON CONFLICT (model, key) DO UPDATE SET vec = excluded.vec`, args...); err != nil {
				return err
			}
		}
		return nil
	})
	return s.b.wrap(err, "saving %d vectors of %s in", len(vecs), model)
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
