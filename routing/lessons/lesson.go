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
	// SourceDetour: learned by the router itself from a detour, a request
	// for more tools that ended in a tool the ranking had not selected.
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
	// LastUsed is when the lesson was last taught again or applied to a
	// query; its weight decays from then.
	LastUsed time.Time `json:"last_used"`
	// Uses counts the times the lesson was taught: 1 at first, one more
	// each time the same lesson is learned again.
	Uses int `json:"uses"`
	// Principal is whose routing the lesson teaches: it applies to that
	// principal's requests only. Empty, it is shared and applies to every
	// principal's (an operator's lesson, one learned before lessons had
	// principals, or any lesson when MemoryOptions.Shared is set).
	Principal string `json:"principal,omitempty"`
}

// visible reports whether l applies to the requests of principal.
func (l *Lesson) visible(principal string) bool {
	return l.Principal == "" || l.Principal == principal
}

// Store persists lessons. It is small so that a shared store (PostgreSQL)
// can serve a fleet of routers later. The state package's database is the
// local one, shared by every gateway on the machine.
type Store interface {
	// Put inserts or replaces l, assigning an ID when l.ID is 0, and
	// returns the lesson as stored.
	Put(ctx context.Context, l Lesson) (Lesson, error)
	// All returns every lesson.
	All(ctx context.Context) ([]Lesson, error)
	// Delete removes the lesson with id; an unknown id is ErrNotFound.
	Delete(ctx context.Context, id int64) error
	// Clear removes every lesson.
	Clear(ctx context.Context) error
	Close() error
}

// versioner is implemented by stores that several processes share:
// Version changes whenever any of them changes the lessons, so a Memory
// reloads only when something changed.
type versioner interface {
	Version(ctx context.Context) (int64, error)
}

// batchPutter is implemented by stores that can write several lessons in
// one transaction; Memory.Flush uses it when available.
type batchPutter interface {
	PutAll(ctx context.Context, ls []Lesson) error
}

var (
	// ErrNotFound: no lesson has the ID given.
	ErrNotFound = errors.New("lesson not found")
	// ErrOverruled: a detour lesson contradicts a lesson from feedback,
	// which stands (the user's word outranks the router's inference).
	ErrOverruled = errors.New("overruled by feedback")
	// ErrTooLarge: a lesson larger than MemoryOptions.MaxBytes alone.
	ErrTooLarge = errors.New("lesson too large")
)

// normalize returns the form of a query that dedup and exact matches
// compare: lower case, runs of white space as one space, trimmed.
func normalize(q string) string {
	return strings.Join(strings.Fields(strings.ToLower(q)), " ")
}
