// Package readable writes values the way a person would in text the
// gateway shows a model or a person: "1 hour", not "1h0m0s".
package readable

import (
	"strconv"
	"time"
)

// units are the units Duration writes in, largest first.
var units = []struct {
	d    time.Duration
	name string
}{{time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}}

// Duration writes d in the largest unit that holds it whole ("1 hour",
// "30 minutes", "90 seconds"), after rounding it up to whole seconds, or
// under a second to whole milliseconds: a wait it names is never too
// short.
func Duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0 seconds"
	case d < time.Second:
		return Count(int64(ceil(d, time.Millisecond)), "millisecond")
	}
	d = ceil(d, time.Second) * time.Second
	for _, u := range units {
		if d%u.d == 0 {
			return Count(int64(d/u.d), u.name)
		}
	}
	return d.String() // unreachable: d is whole seconds
}

// ceil is how many units hold d, rounded up.
func ceil(d, unit time.Duration) time.Duration { return (d + unit - 1) / unit }

// Count is "1 unit" or "n units".
func Count(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}
