package call

import (
	"context"
)

// Authorise is the stage that refuses a request for what is held back
// from callers: heldBack says why (a tool blocked by vetting or meant for
// an app only, a prompt or resource the catalog does not offer), or
// returns nil for what may be called or read.
func Authorise[R any](heldBack func(c *Call) error) StageOf[R] {
	return func(ctx context.Context, c *Call, next HandlerOf[R]) (R, error) {
		if err := heldBack(c); err != nil {
			var none R
			return none, err
		}
		return next(ctx, c)
	}
}

// StartWait is the stage that resolves a request to its upstream
// (c.Upstream): resolve waits, within the request's context, for an
// upstream that is still starting, and says why the request cannot be
// served if it still cannot.
func StartWait[R any](resolve func(ctx context.Context, c *Call) error) StageOf[R] {
	return func(ctx context.Context, c *Call, next HandlerOf[R]) (R, error) {
		if err := resolve(ctx, c); err != nil {
			var none R
			return none, err
		}
		return next(ctx, c)
	}
}

// Screen is the stage that screens every result before any reader sees it
// (result integrity, secret scrubbing). screener gives, before the request
// goes on, the screen of c's upstream as it is then, so that a result is
// screened by the rules of the upstream that gave it; a screen may refuse
// a result whole (a read under the block policy).
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
