package lessons

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// lockTimeout is how long OpenBolt waits for the file lock that another
// process may hold before it fails with ErrInUse.
const lockTimeout = time.Second

// bucket holds the lessons, keyed by big-endian ID, valued as JSON. Its
// sequence is the last ID assigned.
var bucket = []byte("lessons.v1")

// BoltStore is a Store in one local bbolt file. It is safe for concurrent
// use; a second process opening the same file gets ErrInUse.
type BoltStore struct {
	path string
	db   *bolt.DB
}

var (
	_ Store       = (*BoltStore)(nil)
	_ batchPutter = (*BoltStore)(nil)
)

// OpenBolt opens the lessons file at path, creating it (mode 0600) and its
// parent directory (0700) when missing. When another process has the file
// open, it fails within about a second with an error wrapping ErrInUse.
// Errors name the file.
func OpenBolt(path string) (*BoltStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("opening lessons file %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("opening lessons file %s: %w", path, ErrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("opening lessons file %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("initialising lessons file %s: %w", path, err), db.Close())
	}
	return &BoltStore{path: path, db: db}, nil
}

// Path returns the file's path.
func (s *BoltStore) Path() string { return s.path }

// Put inserts or replaces l, assigning the next ID when l.ID is 0.
func (s *BoltStore) Put(ctx context.Context, l Lesson) (Lesson, error) {
	if err := ctx.Err(); err != nil {
		return Lesson{}, fmt.Errorf("putting lesson in %s: %w", s.path, err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		return put(tx.Bucket(bucket), &l)
	})
	if err != nil {
		return Lesson{}, fmt.Errorf("putting lesson %d in %s: %w", l.ID, s.path, err)
	}
	return l, nil
}

// PutAll inserts or replaces lessons in one transaction; each must have
// an ID.
func (s *BoltStore) PutAll(ctx context.Context, ls []Lesson) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("putting lessons in %s: %w", s.path, err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for i := range ls {
			if ls[i].ID == 0 {
				return errors.New("lesson without an ID")
			}
			if err := put(b, &ls[i]); err != nil {
				return fmt.Errorf("lesson %d: %w", ls[i].ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("putting %d lessons in %s: %w", len(ls), s.path, err)
	}
	return nil
}

// put stores l in b, assigning an ID when it has none and keeping the
// sequence past every ID stored.
func put(b *bolt.Bucket, l *Lesson) error {
	if l.ID < 0 {
		return fmt.Errorf("negative lesson ID %d", l.ID)
	}
	if l.ID == 0 {
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		l.ID = int64(seq)
	} else if uint64(l.ID) > b.Sequence() {
		if err := b.SetSequence(uint64(l.ID)); err != nil {
			return err
		}
	}
	v, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return b.Put(key(l.ID), v)
}

func key(id int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(id))
}

// All returns every lesson, by ID.
func (s *BoltStore) All(ctx context.Context) ([]Lesson, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("reading lessons from %s: %w", s.path, err)
	}
	var out []Lesson
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			var l Lesson
			if err := json.Unmarshal(v, &l); err != nil {
				return fmt.Errorf("lesson %d: %w", binary.BigEndian.Uint64(k), err)
			}
			out = append(out, l)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading lessons from %s: %w", s.path, err)
	}
	return out, nil
}

// Delete removes the lesson with id; an unknown id is ErrNotFound.
func (s *BoltStore) Delete(ctx context.Context, id int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deleting lesson %d from %s: %w", id, s.path, err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		if b.Get(key(id)) == nil {
			return ErrNotFound
		}
		return b.Delete(key(id))
	})
	if err != nil {
		return fmt.Errorf("deleting lesson %d from %s: %w", id, s.path, err)
	}
	return nil
}

// Clear removes every lesson. IDs are not reused afterwards.
func (s *BoltStore) Clear(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("clearing lessons in %s: %w", s.path, err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		var keys [][]byte
		err := b.ForEach(func(k, _ []byte) error {
			keys = append(keys, k) // valid for the transaction's life
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clearing lessons in %s: %w", s.path, err)
	}
	return nil
}

// Close closes the file, releasing its lock.
func (s *BoltStore) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing lessons file %s: %w", s.path, err)
	}
	return nil
}
