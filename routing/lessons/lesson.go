package lessons

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Polarity says what a lesson teaches about its tool.
type Polarity int

const (
	// Use: use this tool for queries like this one.
	Use Polarity = 1
	// Avoid: do not use this tool for queries like this one.
	Avoid Polarity = -1
)

// String returns "use" or "avoid".
func (p Polarity) String() string {
	switch p {
	case Use:
		return "use"
	case Avoid:
		return "avoid"
	}
	return "invalid"
}

// Sources of lessons.
const (
	// SourceDetour: learned from a detour (package doc).
	SourceDetour = "detour"
	// SourceFeedback: taught by a routing_feedback call.
	SourceFeedback = "feedback"
)

// Lesson is one piece of routing experience: for queries like Query, use
// (or avoid) Tool.
type Lesson struct {
	ID       int64     `json:"id"`
	Query    string    `json:"query"`
	Tool     string    `json:"tool"` // exposed tool name
	Polarity Polarity  `json:"polarity"`
	Source   string    `json:"source"` // SourceDetour or SourceFeedback
	Note     string    `json:"note,omitempty"`
	Created  time.Time `json:"created"`
	// LastUsed is when the lesson was last taught or applied.
	LastUsed time.Time `json:"last_used"`
	// Uses counts the times the lesson was taught.
	Uses int `json:"uses"`
	// Principal is whose requests the lesson applies to; empty: everyone's.
	Principal string `json:"principal,omitempty"`
}

// visible reports whether l applies to the requests of principal.
func (l *Lesson) visible(principal string) bool {
	return l.Principal == "" || l.Principal == principal
}

// Store persists lessons; the state package implements it.
type Store interface {
	// Put inserts or replaces l, assigning an ID when l.ID is 0, and
	// returns the lesson as stored.
	Put(ctx context.Context, l Lesson) (Lesson, error)
	// All returns every lesson.
	All(ctx context.Context) ([]Lesson, error)
	// Delete removes the lesson with id; an unknown id is ErrNotFound.
	Delete(ctx context.Context, id int64) error
	// PutAll writes ls, each with its ID, in one transaction.
	PutAll(ctx context.Context, ls []Lesson) error
	// Clear removes every lesson.
	Clear(ctx context.Context) error
	// Version changes with every change, by any process sharing the store.
	Version(ctx context.Context) (int64, error)
	Close() error
}

var (
	// ErrNotFound: no lesson has the ID given.
	ErrNotFound = errors.New("lesson not found")
	// ErrOverruled: a detour lesson contradicts one from feedback, which
	// stands.
	ErrOverruled = errors.New("overruled by feedback")
	// ErrTooLarge: a lesson larger than MemoryOptions.MaxBytes alone.
	ErrTooLarge = errors.New("lesson too large")
)

// normalize is the form of a query that dedup and exact matches compare.
func normalize(q string) string {
	return strings.Join(strings.Fields(strings.ToLower(q)), " ")
}
