package upstreamauth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/internal/evict"
)

// RFC 8693 names.
const (
	grantTokenExchange  = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess     = "urn:ietf:params:oauth:token-type:access_token"
	exchangeSkew        = 30 * time.Second // a cached token is dropped this long before it expires
	defaultExchangeLife = 5 * time.Minute  // for an answer without expires_in
	maxExchanged        = 10000            // cached tokens, across callers
)

// exchanger trades callers' tokens for upstream tokens, cached until they expire.
type exchanger struct {
	cfg    TokenExchange
	client *http.Client

	mu    sync.Mutex
	cache map[[32]byte]exchanged
}

type exchanged struct {
	token string
	until time.Time
}

// token returns an upstream token for the caller's subject token.
func (e *exchanger) token(ctx context.Context, subject string) (string, error) {
	k := sha256.Sum256([]byte(subject))
	now := time.Now()
	e.mu.Lock()
	c, ok := e.cache[k]
	e.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.token, nil
	}
	tok, life, err := e.exchange(ctx, subject)
	if err != nil {
		return "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	evict.ToFit(e.cache, maxExchanged, func(c exchanged) bool { return !now.Before(c.until) })
	e.cache[k] = exchanged{token: tok, until: now.Add(life - exchangeSkew)}
	return tok, nil
}

// exchange makes one RFC 8693 exchange with x/oauth2's client
// credentials flow, its grant type overridden; a configured client
// authenticates with HTTP Basic.
func (e *exchanger) exchange(ctx context.Context, subject string) (string, time.Duration, error) {
	params := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {cmp.Or(e.cfg.SubjectTokenType, tokenTypeAccess)},
		"requested_token_type": {tokenTypeAccess},
	}
	for k, v := range map[string]string{"audience": e.cfg.Audience, "scope": e.cfg.Scope, "resource": e.cfg.Resource} {
		if v != "" {
			params.Set(k, v)
		}
	}
	conf := clientcredentials.Config{ClientID: e.cfg.ClientID, ClientSecret: e.cfg.ClientSecret,
		TokenURL: e.cfg.TokenEndpoint, EndpointParams: params, AuthStyle: oauth2.AuthStyleInParams}
	if e.cfg.ClientID != "" {
		conf.AuthStyle = oauth2.AuthStyleInHeader
	}
	tok, err := conf.Token(context.WithValue(ctx, oauth2.HTTPClient, e.client))
	if rerr := (*oauth2.RetrieveError)(nil); errors.As(err, &rerr) { // its text holds the whole reply
		return "", 0, fmt.Errorf("token exchange refused: HTTP %d %s", rerr.Response.StatusCode, oauthReason(rerr.ErrorCode, rerr.ErrorDescription))
	} else if err != nil {
		return "", 0, fmt.Errorf("token exchange: %w", err)
	}
	life := defaultExchangeLife
	if !tok.Expiry.IsZero() {
		life = min(time.Until(tok.Expiry), 24*time.Hour)
	}
	return tok.AccessToken, max(life, 2*exchangeSkew), nil
}

// oauthReason is an OAuth error code and description, bounded.
func oauthReason(code, desc string) string {
	return clip.Ellipsis(strings.Trim(strings.TrimSpace(code+": "+desc), ": "), 200)
}
