package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
)

// The bounds of one run (Options.MaxTextBytes, MaxExpandedBytes,
// MaxForeachItems, MaxCalls, MaxResultBytes): however a plan's references
// multiply values, each is checked before the memory is taken.

// ErrLimit is the cause of every step that fails on one of the plan's
// limits.
var ErrLimit = errors.New("plan limit")

// textBudget bounds the strings built by interpolation: each at most
// perText bytes, and all of them, for one evaluation, at most left.
type textBudget struct {
	perText int
	left    int
	planMax int // for the message
}

// take counts a string of n bytes, or says which limit it passes.
func (b *textBudget) take(n int) error {
	if b == nil {
		return nil
	}
	if n > b.perText {
		return fmt.Errorf("%w: interpolated text over %d bytes", ErrLimit, b.perText)
	}
	if b.left -= n; b.left < 0 {
		return fmt.Errorf("%w: arguments with references filled in over the plan's limit of %d bytes", ErrLimit, b.planMax)
	}
	return nil
}

// fits says whether a string of n bytes fits, without counting it.
func (b *textBudget) fits(n int) bool { return b == nil || n <= b.perText && n <= b.left }

// byteBudget is a count of bytes that calls running at once share.
type byteBudget struct {
	max  int64
	used atomic.Int64
}

// left is what remains, never negative.
func (b *byteBudget) left() int { return int(max(0, b.max-b.used.Load())) }

// take counts n bytes and says whether they fit.
func (b *byteBudget) take(n int) bool { return b.used.Add(int64(n)) <= b.max }

// jsonSize is about the size of v as JSON (strings unescaped), counted
// only up to limit: past it, it returns limit+1 having walked no further.
func jsonSize(v any, limit int) int {
	n := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case nil:
			n += 4
		case bool:
			n += 5
		case string:
			n += len(x) + 2
		case json.Number:
			n += len(x)
		case float64, float32, int, int64, int32, uint, uint64, uint32:
			n += 8
		case map[string]any:
			n += 2
			for k, e := range x {
				if n += len(k) + 4; n > limit || !walk(e) {
					return false
				}
			}
		case []any:
			n += 2
			for _, e := range x {
				if n++; n > limit || !walk(e) {
					return false
				}
			}
		default:
			data, _ := json.Marshal(x)
			n += len(data)
		}
		return n <= limit
	}
	if !walk(v) {
		return limit + 1
	}
	return n
}
