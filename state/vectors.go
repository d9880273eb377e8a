package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/mcp-router/mcp-router/routing"
)

// Vectors returns the routing.VectorStore in the database.
func (db *DB) Vectors() routing.VectorStore { return &sqlVectors{db} }

type sqlVectors struct{ db *DB }

type vecKey = [sha256.Size]byte

// LoadVectors returns every vector stored for model.
func (s *sqlVectors) LoadVectors(model string) (map[vecKey][]float32, error) {
	rows, err := s.db.db.Query(`SELECT key, vec FROM vectors WHERE model = ?`, model)
	if err != nil {
		return nil, fmt.Errorf("reading vectors of %s from %s: %w", model, s.db.path, err)
	}
	defer rows.Close()
	out := map[vecKey][]float32{}
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("reading vectors of %s from %s: %w", model, s.db.path, err)
		}
		if len(k) != sha256.Size || len(v)%4 != 0 {
			continue // not written by this package; the model re-embeds it
		}
		out[vecKey(k)] = decodeVec(v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading vectors of %s from %s: %w", model, s.db.path, err)
	}
	return out, nil
}

// SaveVectors adds vecs to model's vectors and drops those of another
// length, in one transaction.
func (s *sqlVectors) SaveVectors(model string, vecs map[vecKey][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	ctx := context.Background() // the VectorStore interface has no context, like the cache calling it
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		var dims int
		for _, v := range vecs {
			dims = len(v)
			break
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE model = ? AND length(vec) != ?`, model, 4*dims); err != nil {
			return err
		}
		return insertVectors(ctx, tx, model, vecs)
	})
	if err != nil {
		return fmt.Errorf("saving %d vectors of %s in %s: %w", len(vecs), model, s.db.path, err)
	}
	return nil
}

func insertVectors(ctx context.Context, tx *sql.Tx, model string, vecs map[vecKey][]float32) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO vectors (model, key, vec) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for k, v := range vecs {
		if _, err := stmt.ExecContext(ctx, model, k[:], encodeVec(v)); err != nil {
			return err
		}
	}
	return nil
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
