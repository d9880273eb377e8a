package audit

import (
	"fmt"
	"os"
)

// rotator appends to a file and, before a write would take it past max
// bytes, renames it to path.1 (path.1 to path.2, ..., dropping path.keep)
// and starts a new one. A line longer than max goes alone in its file.
type rotator struct {
	path string
	max  int64
	keep int
	f    *os.File
	size int64
}

func openRotator(path string, max int64, keep int) (*rotator, error) {
	r := &rotator{path: path, max: max, keep: keep}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rotator) open() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size = f, st.Size()
	return nil
}

func (r *rotator) write(line []byte) error {
	if r.f == nil { // a rotation could not reopen the file: try again
		if err := r.open(); err != nil {
			return err
		}
	}
	if r.size > 0 && r.size+int64(len(line)) > r.max {
		if err := r.rotate(); err != nil {
			return fmt.Errorf("rotating %s: %w", r.path, err)
		}
	}
	n, err := r.f.Write(line)
	r.size += int64(n)
	return err
}

func (r *rotator) rotate() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	r.f = nil
	name := func(i int) string { return fmt.Sprintf("%s.%d", r.path, i) }
	if err := os.Remove(name(r.keep)); err != nil && !os.IsNotExist(err) {
		return err
	}
	for i := r.keep - 1; i >= 1; i-- {
		if err := os.Rename(name(i), name(i+1)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := os.Rename(r.path, name(1)); err != nil {
		return err
	}
	return r.open()
}

func (r *rotator) close() error {
	if r.f == nil {
		return nil
	}
	return r.f.Close()
}
