package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcp-router/mcp-router/routing/lessons"
)

// Lessons returns the lessons.Store in the database. Its Close does
// nothing: the database's owner closes it.
func (s stores) Lessons() lessons.Store { return lessonStore{s.b} }

type lessonStore struct{ b engine }

var _ lessons.Store = lessonStore{}

const lessonColumns = `id, query, tool, polarity, source, note, created, last_used, uses, principal`

// Put inserts or replaces l, assigning the next ID when l.ID is 0.
func (s lessonStore) Put(ctx context.Context, l lessons.Lesson) (lessons.Lesson, error) {
	err := s.b.write(ctx, func(c conn) error {
		if err := s.put(ctx, c, &l); err != nil {
			return err
		}
		return bump(ctx, c, "lessons")
	})
	if err != nil {
		return lessons.Lesson{}, fmt.Errorf("putting lesson %d in %s: %w", l.ID, s.b.name, err)
	}
	return l, nil
}

// PutAll inserts or replaces ls in one transaction; each must have an ID.
func (s lessonStore) PutAll(ctx context.Context, ls []lessons.Lesson) error {
	err := s.b.write(ctx, func(c conn) error {
		for i := range ls {
			if ls[i].ID == 0 {
				return errors.New("lesson without an ID")
			}
			if err := s.put(ctx, c, &ls[i]); err != nil {
				return fmt.Errorf("lesson %d: %w", ls[i].ID, err)
			}
		}
		return bump(ctx, c, "lessons")
	})
	if err != nil {
		return fmt.Errorf("putting %d lessons in %s: %w", len(ls), s.b.name, err)
	}
	return nil
}

// put inserts or replaces l. IDs are never reused: state.db's
// AUTOINCREMENT assigns them, in PostgreSQL the lesson_ids counter.
func (s lessonStore) put(ctx context.Context, c conn, l *lessons.Lesson) error {
	if l.ID < 0 {
		return fmt.Errorf("negative lesson ID %d", l.ID)
	}
	if s.b.pg {
		var err error
		if l.ID == 0 {
			_, err = c.one(ctx, `UPDATE counters SET n = n + 1 WHERE name = 'lesson_ids' RETURNING n`, nil, &l.ID)
		} else {
			_, err = c.exec(ctx, `UPDATE counters SET n = GREATEST(n, ?) WHERE name = 'lesson_ids'`, l.ID)
		}
		if err != nil {
			return err
		}
	}
	var id any = l.ID
	if l.ID == 0 {
		id = nil // state.db's AUTOINCREMENT assigns it
	}
	_, err := c.one(ctx, `INSERT INTO lessons (`+lessonColumns+`) VALUES (`+placeholders(10)+`)
		ON CONFLICT (id) DO UPDATE SET query = excluded.query, tool = excluded.tool, polarity = excluded.polarity,
		source = excluded.source, note = excluded.note, created = excluded.created,
		last_used = excluded.last_used, uses = excluded.uses, principal = excluded.principal
		RETURNING id`,
		[]any{id, l.Query, l.Tool, int(l.Polarity), l.Source, l.Note, nanos(l.Created), nanos(l.LastUsed), l.Uses, l.Principal}, &l.ID)
	return err
}

// All returns every lesson, by ID.
func (s lessonStore) All(ctx context.Context) ([]lessons.Lesson, error) {
	return queryAll(ctx, s.b, "lessons", scanLesson, `SELECT `+lessonColumns+` FROM lessons ORDER BY id`)
}

// Delete removes the lesson with id; an unknown id is lessons.ErrNotFound.
func (s lessonStore) Delete(ctx context.Context, id int64) error {
	err := s.b.write(ctx, func(c conn) error {
		n, err := c.exec(ctx, `DELETE FROM lessons WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return lessons.ErrNotFound
		}
		return bump(ctx, c, "lessons")
	})
	if err != nil {
		return fmt.Errorf("deleting lesson %d from %s: %w", id, s.b.name, err)
	}
	return nil
}

// Clear removes every lesson. IDs are not reused afterwards.
func (s lessonStore) Clear(ctx context.Context) error {
	err := s.b.write(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `DELETE FROM lessons`); err != nil {
			return err
		}
		return bump(ctx, c, "lessons")
	})
	if err != nil {
		return fmt.Errorf("clearing lessons in %s: %w", s.b.name, err)
	}
	return nil
}

// Version changes whenever any process changes the lessons.
func (s lessonStore) Version(ctx context.Context) (int64, error) {
	var n int64
	if _, err := s.b.conn.one(ctx, `SELECT n FROM counters WHERE name = 'lessons'`, nil, &n); err != nil {
		return 0, fmt.Errorf("reading the lessons' version from %s: %w", s.b.name, err)
	}
	return n, nil
}

// Close does nothing: the database's owner closes it.
func (s lessonStore) Close() error { return nil }
