// Package ollamaerr turns errors of the Ollama client library into short
// ones that are safe to show: no URL, no headers, the server's message cut
// short. The embedder (routing) and the chat model (planner) share it.
package ollamaerr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/ollama/ollama/api"
)

// MaxReason bounds the server's error text: a proxy in front of Ollama may
// answer with a whole HTML page.
const MaxReason = 200

// Reason explains err from a request bounded by timeout: the caller's
// context ending (parent), the request's own timeout, an unreachable
// server, or the server's status and message.
func Reason(parent context.Context, err error, timeout time.Duration) error {
	var (
		ue   *url.Error
		oe   *net.OpError
		se   api.StatusError
		auth api.AuthorizationError
	)
	if errors.As(err, &ue) {
		err = ue.Err // drop the method and the URL
	}
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("no answer in time: %w", context.Cause(parent))
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer within %v: %w", timeout, err)
	case errors.As(err, &oe) && oe.Op == "dial":
		return fmt.Errorf("server unreachable: %w", oe.Err)
	case errors.As(err, &se):
		return fmt.Errorf("status %d: %s", se.StatusCode, clip.Ellipsis(se.ErrorMessage, MaxReason))
	case errors.As(err, &auth):
		return fmt.Errorf("status %d: unauthorized", auth.StatusCode)
	}
	return err
}
