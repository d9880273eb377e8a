package upstreamauth

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Status is what `auth status` says of one upstream's login; it never
// holds a token.
type Status struct {
	Upstream    string    `json:"upstream"`
	Principal   string    `json:"principal,omitempty"` // "" for the gateway's own login
	LoggedIn    bool      `json:"logged_in"`
	ExpiresAt   time.Time `json:"expires_at,omitzero"`
	Refreshable bool      `json:"refreshable"`
	Err         string    `json:"error,omitempty"`
}

// StatusOf reads the login of upstream (at resource, its URL) for
// principal ("" for the gateway's own).
func (v *Vault) StatusOf(ctx context.Context, upstream, resource, principal string) Status {
	s := Status{Upstream: upstream, Principal: principal}
	rec, err := v.Load(ctx, resource, principal)
	switch {
	case errors.Is(err, ErrNoLogin):
		return s
	case err != nil:
		s.Err = err.Error()
		return s
	}
	s.LoggedIn, s.ExpiresAt, s.Refreshable = true, rec.Token.ExpiresAt, rec.Token.RefreshToken != ""
	return s
}

// Words says s for a person, at now.
func (s Status) Words(now time.Time) string {
	switch {
	case s.Err != "":
		return "unreadable: " + s.Err
	case !s.LoggedIn:
		return "needs login (" + LoginCommand(s.Upstream, s.Principal) + ")"
	case s.ExpiresAt.IsZero() && s.Refreshable:
		return "logged in, refreshable"
	case s.ExpiresAt.IsZero():
		return "logged in"
	case now.Before(s.ExpiresAt) && s.Refreshable:
		return fmt.Sprintf("logged in until %s, refreshable", s.ExpiresAt.Local().Format(time.DateTime))
	case now.Before(s.ExpiresAt):
		return fmt.Sprintf("logged in until %s", s.ExpiresAt.Local().Format(time.DateTime))
	case s.Refreshable:
		return fmt.Sprintf("expired at %s, refreshable (the next call refreshes it)", s.ExpiresAt.Local().Format(time.DateTime))
	default:
		return fmt.Sprintf("expired at %s: needs login (%s)", s.ExpiresAt.Local().Format(time.DateTime), LoginCommand(s.Upstream, s.Principal))
	}
}
