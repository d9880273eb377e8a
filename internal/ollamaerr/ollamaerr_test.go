package ollamaerr

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

func TestReason(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		parent context.Context
		err    error
		want   string
	}{
		{"caller gone", done, errors.New("x"), "no answer in time"},
		{"timeout", context.Background(), context.DeadlineExceeded, "no answer within 2s"},
		{"status", context.Background(), api.StatusError{StatusCode: 404, ErrorMessage: strings.Repeat("y", 500)}, "status 404: yyy"},
	}
	for _, tt := range tests {
		got := Reason(tt.parent, tt.err, 2*time.Second).Error()
		if !strings.Contains(got, tt.want) || len(got) > MaxReason+40 {
			t.Errorf("%s: got %q, want it to contain %q and be short", tt.name, got, tt.want)
		}
	}
}
