package call

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
)

// Authorise is the stage that refuses a call of a tool held back from
// callers: heldBack says why (blocked by vetting, meant for an app only),
// or returns nil for a tool that may be called.
func Authorise(heldBack func(tool string) error) Stage {
	return func(ctx context.Context, c *Call, next Handler) (*mcp.CallToolResult, error) {
		if err := heldBack(c.Tool); err != nil {
			return nil, err
		}
		return next(ctx, c)
	}
}

// StartWait is the stage that resolves a call's tool to its upstream
// (c.Upstream): resolve waits, within the call's context, for an upstream
// that is still starting, and says why the tool cannot be called if it
// still cannot.
func StartWait(resolve func(ctx context.Context, c *Call) error) Stage {
	return func(ctx context.Context, c *Call, next Handler) (*mcp.CallToolResult, error) {
		if err := resolve(ctx, c); err != nil {
			return nil, err
		}
		return next(ctx, c)
	}
}

// Screen is the stage that screens every result before any reader sees it
// (result integrity, secret scrubbing). screener gives, before the call
// goes on, the screen of c's upstream as it is then, so that a result is
// screened by the rules of the upstream that gave it.
func Screen(screener func(c *Call) (func(*mcp.CallToolResult) *mcp.CallToolResult, error)) Stage {
	return func(ctx context.Context, c *Call, next Handler) (*mcp.CallToolResult, error) {
		screen, err := screener(c)
		if err != nil {
			return nil, err
		}
		res, err := next(ctx, c)
		if err != nil {
			return nil, err
		}
		return screen(res), nil
	}
}
