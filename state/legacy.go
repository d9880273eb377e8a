package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// Legacy names the state files of earlier versions, which kept each kind
// of state in a file of its own.
type Legacy struct {
	// LessonsFile is the bbolt lessons file.
	LessonsFile string
	// PinsFile is pins.json.
	PinsFile string
	// VectorFiles are the embeddings cache's vectors.bin files.
	VectorFiles []string
}

// MigratedSuffix is appended to the name of each file imported.
const MigratedSuffix = ".migrated"

// legacyFile is one file read for import.
type legacyFile struct {
	path    string
	lessons []lessons.Lesson
	pins    integrity.Pins
	model   string
	vectors map[[sha256.Size]byte][]float32
}

// ImportLegacy imports the files of l that exist into the database, all in
// one transaction, and then renames each to its name plus MigratedSuffix:
// nothing is deleted. A file already imported (by another process
// starting at the same time) is not imported twice. A file that cannot be
// read is left where it is and named in the error; the others are
// imported. It returns the files imported.
func (db *DB) ImportLegacy(ctx context.Context, l Legacy) ([]string, error) {
	files, errs := readLegacy(ctx, l)
	if len(files) == 0 {
		return nil, errors.Join(errs...)
	}
	var imported []string
	err := db.write(ctx, func(tx *sql.Tx) error {
		imported = imported[:0]
		for _, f := range files {
			done, err := importFile(ctx, tx, f)
			if err != nil {
				return fmt.Errorf("importing %s: %w", f.path, err)
			}
			if done {
				imported = append(imported, f.path)
			}
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(append(errs, fmt.Errorf("importing into %s: %w", db.path, err))...)
	}
	for _, f := range files {
		if err := os.Rename(f.path, f.path+MigratedSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("imported %s into %s, but renaming it: %w", f.path, db.path, err))
		}
	}
	return imported, errors.Join(errs...)
}

// readLegacy reads the files of l that exist.
func readLegacy(ctx context.Context, l Legacy) ([]legacyFile, []error) {
	var files []legacyFile
	var errs []error
	add := func(f legacyFile, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		files = append(files, f)
	}
	if exists(l.LessonsFile) {
		add(readLegacyLessons(ctx, l.LessonsFile))
	}
	if exists(l.PinsFile) {
		pins, err := integrity.ReadPinsFile(l.PinsFile)
		add(legacyFile{path: l.PinsFile, pins: pins}, err)
	}
	for _, p := range l.VectorFiles {
		if exists(p) {
			model, vecs, err := routing.ReadVectorFile(p)
			add(legacyFile{path: p, model: model, vectors: vecs}, err)
		}
	}
	return files, errs
}

func exists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}

func readLegacyLessons(ctx context.Context, path string) (legacyFile, error) {
	b, err := lessons.OpenBolt(path)
	if err != nil {
		return legacyFile{}, err
	}
	defer b.Close()
	all, err := b.All(ctx)
	return legacyFile{path: path, lessons: all}, err
}

// importFile writes f's state in tx unless f was imported before, and
// records that it was; done reports whether it imported f now.
func importFile(ctx context.Context, tx *sql.Tx, f legacyFile) (done bool, err error) {
	abs, err := filepath.Abs(f.path)
	if err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO imports (path, at) VALUES (?, ?)`, abs, time.Now().UnixNano())
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err // imported before
	}
	switch {
	case f.lessons != nil:
		err = importLessons(ctx, tx, f.lessons)
	case f.pins != nil:
		err = importPins(ctx, tx, f.pins)
	case f.vectors != nil:
		err = insertVectors(ctx, tx, "INSERT OR IGNORE", f.model, f.vectors)
	}
	return err == nil, err
}

// importLessons inserts ls keeping their IDs, or under new IDs where the
// database already has a lesson with that ID.
func importLessons(ctx context.Context, tx *sql.Tx, ls []lessons.Lesson) error {
	for _, l := range ls {
		var taken bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM lessons WHERE id = ?)`, l.ID).Scan(&taken)
		if err != nil {
			return err
		}
		if taken {
			l.ID = 0
		}
		if err := putLesson(ctx, tx, &l); err != nil {
			return fmt.Errorf("lesson %d: %w", l.ID, err)
		}
	}
	return bump(ctx, tx, "lessons")
}

// importPins inserts the pins the database does not have yet.
func importPins(ctx context.Context, tx *sql.Tx, set integrity.Pins) error {
	for up, tools := range set {
		for tool, r := range tools {
			if err := putPin(ctx, tx, "INSERT OR IGNORE", up, tool, r); err != nil {
				return fmt.Errorf("pin of %s on %s: %w", tool, up, err)
			}
		}
	}
	return bump(ctx, tx, "pins")
}
