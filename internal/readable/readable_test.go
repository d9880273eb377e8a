package readable

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                 "0 seconds",
		-time.Second:                      "0 seconds",
		time.Millisecond:                  "1 millisecond",
		1500 * time.Microsecond:           "2 milliseconds",
		250 * time.Millisecond:            "250 milliseconds",
		time.Second:                       "1 second",
		90 * time.Second:                  "90 seconds",
		1234 * time.Millisecond:           "2 seconds",
		61*time.Second + time.Millisecond: "62 seconds",
		59500 * time.Millisecond:          "1 minute",
		time.Minute:                       "1 minute",
		30 * time.Minute:                  "30 minutes",
		90 * time.Minute:                  "90 minutes",
		time.Hour:                         "1 hour",
		24 * time.Hour:                    "24 hours",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
