package call

import (
	"context"
)

// Authorise is the stage that refuses what heldBack says is held back from
// callers (a blocked or app-only tool, a prompt or resource not offered).
func Authorise[R any](heldBack func(c *Call) error) StageOf[R] {
	return StartWait[R](func(_ context.Context, c *Call) error { return heldBack(c) })
}

// StartWait is the stage that resolves c.Upstream: resolve waits for an
// upstream still starting and says why the request cannot be served.
func StartWait[R any](resolve func(ctx context.Context, c *Call) error) StageOf[R] {
	return func(ctx context.Context, c *Call, next HandlerOf[R]) (R, error) {
		if err := resolve(ctx, c); err != nil {
			var none R
			return none, err
		}
		return next(ctx, c)
	}
}

// Screen is the stage that screens every result (integrity, secret
// scrubbing) by the rules of the upstream that gave it, taken before the
// request goes on; a screen may refuse a result whole.
func Screen[R any](screener func(c *Call) (func(R) (R, error), error)) StageOf[R] {
	return func(ctx context.Context, c *Call, next HandlerOf[R]) (R, error) {
		var none R
		screen, err := screener(c)
		if err != nil {
			return none, err
		}
		res, err := next(ctx, c)
		if err != nil {
			return none, err
		}
		return screen(res)
	}
}
