package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
)

// maxSpoolBytes bounds the spool of records the store could not take.
const maxSpoolBytes = 16 << 20

// spool keeps, as JSON lines in a file, the records a Store write failed
// for, until the store takes them. Only the Log's writer uses it.
type spool struct {
	path  string   // "" keeps nothing
	adopt []string // spools of earlier processes, written to the store with this one's
	size  int64    // bytes in path
}

// pending reports whether records wait in a spool.
func (s *spool) pending() bool { return s.size > 0 || len(s.adopt) > 0 }

// add appends what fits of recs under the bound and returns how many did
// not fit.
func (s *spool) add(recs []Record) (left int, err error) {
	if s.path == "" {
		return len(recs), nil
	}
	buf, kept := encodeLines(recs, maxSpoolBytes-s.size)
	if kept == 0 {
		return len(recs), nil
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return len(recs), fmt.Errorf("audit spool: %w", err)
	}
	n, err := f.Write(buf)
	s.size += int64(n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return len(recs), fmt.Errorf("audit spool %s: %w", s.path, err)
	}
	return len(recs) - kept, nil
}

// flush writes the spooled records to store, oldest first, maxBatch at a
// time; a file is removed once written, or rewritten with what was not.
func (s *spool) flush(store Store, newCtx func() (context.Context, context.CancelFunc)) error {
	for len(s.adopt) > 0 {
		if err := flushFile(s.adopt[0], store, newCtx); err != nil {
			return err
		}
		s.adopt = s.adopt[1:]
	}
	if s.size == 0 {
		return nil
	}
	if err := flushFile(s.path, store, newCtx); err != nil {
		if st, serr := os.Stat(s.path); serr == nil {
			s.size = st.Size()
		}
		return err
	}
	s.size = 0
	return nil
}

func flushFile(path string, store Store, newCtx func() (context.Context, context.CancelFunc)) error {
	recs, err := readSpool(path)
	if err != nil {
		return err
	}
	for len(recs) > 0 {
		n := min(len(recs), maxBatch)
		ctx, cancel := newCtx()
		err := store.Append(ctx, recs[:n])
		cancel()
		if err != nil {
			return errors.Join(fmt.Errorf("audit store: %w", err), rewriteSpool(path, recs))
		}
		recs = recs[n:]
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("audit spool: %w", err)
	}
	return nil
}

// readSpool reads the records of a spool file; a line that does not
// decode (a write cut short) is skipped.
func readSpool(path string) ([]Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit spool: %w", err)
	}
	defer f.Close()
	var recs []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			recs = append(recs, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit spool %s: %w", path, err)
	}
	return recs, nil
}

// encodeLines is recs as JSON lines, as many as fit in room bytes, and how
// many they are.
func encodeLines(recs []Record, room int64) ([]byte, int) {
	var buf bytes.Buffer
	for i, r := range recs {
		line, err := json.Marshal(r)
		if err != nil || int64(buf.Len()+len(line)+1) > room {
			return buf.Bytes(), i
		}
		buf.Write(append(line, '\n'))
	}
	return buf.Bytes(), len(recs)
}

// rewriteSpool replaces path's records with recs.
func rewriteSpool(path string, recs []Record) error {
	buf, _ := encodeLines(recs, math.MaxInt64) // they were decoded from JSON
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf, 0o600); err != nil {
		return fmt.Errorf("audit spool: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("audit spool: %w", err)
	}
	return nil
}
