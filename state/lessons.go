package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mcp-router/mcp-router/routing/lessons"
)

// Lessons returns the lessons.Store in the database. Its Close does
// nothing: the DB's owner closes the DB.
func (db *DB) Lessons() lessons.Store { return &sqlLessons{db} }

type sqlLessons struct{ db *DB }

var _ lessons.Store = (*sqlLessons)(nil)

const lessonColumns = `id, query, tool, polarity, source, note, created, last_used, uses, principal`

// Put inserts or replaces l, assigning the next ID when l.ID is 0.
func (s *sqlLessons) Put(ctx context.Context, l lessons.Lesson) (lessons.Lesson, error) {
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		if err := putLesson(ctx, tx, &l); err != nil {
			return err
		}
		return bump(ctx, tx, "lessons")
	})
	if err != nil {
		return lessons.Lesson{}, fmt.Errorf("putting lesson %d in %s: %w", l.ID, s.db.path, err)
	}
	return l, nil
}

// PutAll inserts or replaces ls in one transaction; each must have an ID.
func (s *sqlLessons) PutAll(ctx context.Context, ls []lessons.Lesson) error {
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		for i := range ls {
			if ls[i].ID == 0 {
				return errors.New("lesson without an ID")
			}
			if err := putLesson(ctx, tx, &ls[i]); err != nil {
				return fmt.Errorf("lesson %d: %w", ls[i].ID, err)
			}
		}
		return bump(ctx, tx, "lessons")
	})
	if err != nil {
		return fmt.Errorf("putting %d lessons in %s: %w", len(ls), s.db.path, err)
	}
	return nil
}

func putLesson(ctx context.Context, tx *sql.Tx, l *lessons.Lesson) error {
	if l.ID < 0 {
		return fmt.Errorf("negative lesson ID %d", l.ID)
	}
	args := []any{l.Query, l.Tool, int(l.Polarity), l.Source, l.Note, nanos(l.Created), nanos(l.LastUsed), l.Uses, l.Principal}
	if l.ID > 0 {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO lessons (`+lessonColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			append([]any{l.ID}, args...)...)
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO lessons (query, tool, polarity, source, note, created, last_used, uses, principal)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if err != nil {
		return err
	}
	l.ID, err = res.LastInsertId()
	return err
}

// All returns every lesson, by ID.
func (s *sqlLessons) All(ctx context.Context) ([]lessons.Lesson, error) {
	rows, err := s.db.db.QueryContext(ctx, selectLessons)
	if err != nil {
		return nil, fmt.Errorf("reading lessons from %s: %w", s.db.path, err)
	}
	defer rows.Close()
	out, err := readLessons(rows)
	if err != nil {
		return nil, fmt.Errorf("reading lessons from %s: %w", s.db.path, err)
	}
	return out, nil
}

// Delete removes the lesson with id; an unknown id is lessons.ErrNotFound.
func (s *sqlLessons) Delete(ctx context.Context, id int64) error {
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM lessons WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmpErr(err, lessons.ErrNotFound)
		}
		return bump(ctx, tx, "lessons")
	})
	if err != nil {
		return fmt.Errorf("deleting lesson %d from %s: %w", id, s.db.path, err)
	}
	return nil
}

// cmpErr returns err, or alt when err is nil.
func cmpErr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

// Clear removes every lesson. IDs are not reused afterwards.
func (s *sqlLessons) Clear(ctx context.Context) error {
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM lessons`); err != nil {
			return err
		}
		return bump(ctx, tx, "lessons")
	})
	if err != nil {
		return fmt.Errorf("clearing lessons in %s: %w", s.db.path, err)
	}
	return nil
}

// Version changes whenever any process changes the lessons.
func (s *sqlLessons) Version(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.db.QueryRowContext(ctx, `SELECT n FROM counters WHERE name = 'lessons'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("reading the lessons' version from %s: %w", s.db.path, err)
	}
	return n, nil
}

// Close does nothing: the DB's owner closes it.
func (s *sqlLessons) Close() error { return nil }
