package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcp-router/mcp-router/routing/lessons"
)

// Lessons returns the lessons.Store in the database. Its Close does
// nothing: the database's owner closes it.
func (s stores) Lessons() lessons.Store { return lessonStore(s) }

type lessonStore struct{ b engine }

var _ lessons.Store = lessonStore{}

const lessonColumns = `id, query, tool, polarity, source, note, created, last_used, uses, principal`

// Put inserts or replaces l, assigning the next ID when l.ID is 0.
func (s lessonStore) Put(ctx context.Context, l lessons.Lesson) (lessons.Lesson, error) {
	if err := s.change(ctx, func(c conn) error { return s.put(ctx, c, &l) }); err != nil {
		return lessons.Lesson{}, s.b.wrap(err, "putting lesson %d in", l.ID)
	}
	return l, nil
}

// change runs fn in a write transaction that counts a change of the
// lessons.
func (s lessonStore) change(ctx context.Context, fn func(c conn) error) error {
	return s.b.write(ctx, func(c conn) error {
		if err := fn(c); err != nil {
			return err
		}
		return bump(ctx, c, "lessons")
	})
}

// PutAll inserts or replaces ls in one transaction; each must have an ID.
func (s lessonStore) PutAll(ctx context.Context, ls []lessons.Lesson) error {
	err := s.change(ctx, func(c conn) error {
		for i := range ls {
			if ls[i].ID == 0 {
				return errors.New("lesson without an ID")
			}
			if err := s.put(ctx, c, &ls[i]); err != nil {
				return fmt.Errorf("lesson %d: %w", ls[i].ID, err)
			}
		}
		return nil
	})
	return s.b.wrap(err, "putting %d lessons in", len(ls))
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
	err := s.change(ctx, func(c conn) error {
		n, err := c.exec(ctx, `DELETE FROM lessons WHERE id = ?`, id)
		if err == nil && n == 0 {
			err = lessons.ErrNotFound
		}
		return err
	})
	return s.b.wrap(err, "deleting lesson %d from", id)
}

// Clear removes every lesson. IDs are not reused afterwards.
func (s lessonStore) Clear(ctx context.Context) error {
	err := s.change(ctx, func(c conn) error {
		_, err := c.exec(ctx, `DELETE FROM lessons`)
		return err
	})
	return s.b.wrap(err, "clearing lessons in")
}

// Version changes whenever any process changes the lessons.
func (s lessonStore) Version(ctx context.Context) (int64, error) {
	var n int64
	_, err := s.b.conn.one(ctx, `SELECT n FROM counters WHERE name = 'lessons'`, nil, &n)
	return n, s.b.wrap(err, "reading the lessons' version from")
}

// Close does nothing: the database's owner closes it.
func (s lessonStore) Close() error { return nil }

// scanLesson reads a row of lessonColumns.
func scanLesson(r rows) (l lessons.Lesson, err error) {
	var pol int
	var created, used int64
	err = r.Scan(&l.ID, &l.Query, &l.Tool, &pol, &l.Source, &l.Note, &created, &used, &l.Uses, &l.Principal)
	l.Polarity, l.Created, l.LastUsed = lessons.Polarity(pol), fromNanos(created), fromNanos(used)
	return l, err
}
