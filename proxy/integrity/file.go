package integrity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// fileVersion is the pins.json format this package reads and writes.
const fileVersion = 1

// pinsFile is the layout of pins.json.
type pinsFile struct {
	Version   int  `json:"version"`
	Upstreams Pins `json:"upstreams"`
}

// FilePins is the [PinStore] of earlier versions: pins.json in a
// directory, changed under an advisory lock (pins.lock) and replaced
// atomically. The state database has taken its place; it remains for
// reading the files of earlier versions ([ReadPinsFile]) and for tests.
type FilePins struct {
	path     string // pins.json
	lockPath string // pins.lock, held while reading, changing and writing
}

var _ PinStore = (*FilePins)(nil)

// OpenFile returns the pins.json store in dir, creating dir (0700) when
// missing.
func OpenFile(dir string) (*FilePins, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating pin store directory: %w", err)
	}
	return &FilePins{path: filepath.Join(dir, "pins.json"), lockPath: filepath.Join(dir, "pins.lock")}, nil
}

// UpdatePins re-reads the file under the lock, lets change edit it, and
// writes it when change reports a difference.
func (f *FilePins) UpdatePins(change func(Pins) bool) error {
	unlock, err := lockFile(f.lockPath)
	if err != nil {
		return err
	}
	defer unlock()
	set, err := readPins(f.path)
	if err != nil {
		return err
	}
	if change(set) {
		return writePins(f.path, set)
	}
	return nil
}

// ReadPinsFile reads a pins.json written by earlier versions; anything it
// cannot read back is [ErrCorrupt] naming the file.
func ReadPinsFile(path string) (Pins, error) { return readPins(path) }

var hashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// readPins reads path; a missing file is an empty store, anything it
// cannot read back is [ErrCorrupt] naming the file.
func readPins(path string) (Pins, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return make(Pins), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pin store: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f pinsFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrCorrupt, path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w %s: data after the JSON object", ErrCorrupt, path)
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrCorrupt, path, err)
	}
	if f.Upstreams == nil {
		f.Upstreams = make(Pins)
	}
	return f.Upstreams, nil
}

func (f pinsFile) validate() error {
	if f.Version != fileVersion {
		return fmt.Errorf("version %d, want %d", f.Version, fileVersion)
	}
	for upstream, tools := range f.Upstreams {
		if tools == nil {
			return fmt.Errorf("upstreams.%s: null", upstream)
		}
		for tool, rec := range tools {
			if !hashPattern.MatchString(rec.Hash) {
				return fmt.Errorf("upstreams.%s.%s.hash: %q is not a SHA-256 hex digest", upstream, tool, rec.Hash)
			}
			if rec.PendingHash != "" && !hashPattern.MatchString(rec.PendingHash) {
				return fmt.Errorf("upstreams.%s.%s.pending_hash: %q is not a SHA-256 hex digest", upstream, tool, rec.PendingHash)
			}
		}
	}
	return nil
}

// writePins replaces path atomically: a temporary file in the same
// directory, written, synced and renamed over it, then the directory
// synced so the rename survives a crash.
func writePins(path string, set Pins) error {
	b, err := json.MarshalIndent(pinsFile{Version: fileVersion, Upstreams: set}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding pin store: %w", err)
	}
	b = append(b, '\n')
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".pins-*.json.tmp") // created 0600
	if err != nil {
		return fmt.Errorf("writing pin store: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename this finds nothing
	if err := writeSynced(tmp, b); err != nil {
		return fmt.Errorf("writing pin store %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing pin store: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("writing pin store: syncing %s: %w", dir, err)
	}
	return nil
}

func writeSynced(f *os.File, b []byte) error {
	_, err := f.Write(b)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
