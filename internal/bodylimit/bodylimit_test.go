package bodylimit

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBoundOllamaBody reads bodies at the limit (whole) and one byte over
// (ErrTooLarge, no more than the limit handed on).
func TestBoundOllamaBody(t *testing.T) {
	const max = 1000
	for _, n := range []int{max, max + 1, 10 * max} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.Repeat("x", n))
		}))
		resp, err := Client(max).Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ts.Close()
		switch {
		case n <= max && (err != nil || len(got) != n):
			t.Errorf("%d bytes: got %d, %v; want them whole", n, len(got), err)
		case n > max && (!errors.Is(err, ErrTooLarge) || len(got) > max):
			t.Errorf("%d bytes: got %d, %v; want ErrTooLarge after at most %d", n, len(got), err, max)
		}
	}
}
