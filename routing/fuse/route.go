package fuse

import (
	"errors"
	"fmt"
	"strings"
)

// Route is the main router's verdict on what kind of turn this is; it sets
// how many tools the belt may carry (see [Fuse]).
type Route string

// The routes. RouteUnspecified means the main router gave none.
const (
	RouteUnspecified Route = ""
	RouteSimple      Route = "SIMPLE_TOOL"
	RouteComplex     Route = "COMPLEX_TOOL"
	RouteGeneralChat Route = "GENERAL_CHAT"
	RouteExit        Route = "EXIT"
)

// ErrUnknownRoute is returned by [ParseRoute] for a name that is not a route.
var ErrUnknownRoute = errors.New("unknown route")

// ParseRoute parses a route name case-insensitively, ignoring surrounding
// space. The empty string parses as [RouteUnspecified].
func ParseRoute(s string) (Route, error) {
	r := Route(strings.ToUpper(strings.TrimSpace(s)))
	switch r {
	case RouteUnspecified, RouteSimple, RouteComplex, RouteGeneralChat, RouteExit:
		return r, nil
	}
	return "", fmt.Errorf("%w %q", ErrUnknownRoute, s)
}
