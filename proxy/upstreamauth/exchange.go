package upstreamauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

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

// ErrExchange marks a token exchange the authorization server refused.
var ErrExchange = errors.New("token exchange refused")

// exchanger trades callers' tokens for upstream tokens and keeps each
// until shortly before it expires, by a hash of the caller's token.
type exchanger struct {
	cfg    TokenExchange
	client *http.Client
	now    func() time.Time

	mu    sync.Mutex
	cache map[[32]byte]exchanged
}

type exchanged struct {
	token string
	until time.Time
}

func newExchanger(cfg TokenExchange, client *http.Client) *exchanger {
	return &exchanger{cfg: cfg, client: client, now: time.Now, cache: make(map[[32]byte]exchanged)}
}

// token returns an upstream token for the caller's subject token.
func (e *exchanger) token(ctx context.Context, subject string) (string, error) {
	k := sha256.Sum256([]byte(subject))
	now := e.now()
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

func (e *exchanger) exchange(ctx context.Context, subject string) (string, time.Duration, error) {
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {orDefault(e.cfg.SubjectTokenType, tokenTypeAccess)},
		"requested_token_type": {tokenTypeAccess},
	}
	for k, v := range map[string]string{"audience": e.cfg.Audience, "scope": e.cfg.Scope, "resource": e.cfg.Resource} {
		if v != "" {
			form.Set(k, v)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("token exchange: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if e.cfg.ClientID != "" {
		req.SetBasicAuth(url.QueryEscape(e.cfg.ClientID), url.QueryEscape(e.cfg.ClientSecret))
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("token exchange: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body) // bounded by boundClient
	if err != nil {
		return "", 0, fmt.Errorf("token exchange: reading the answer: %w", err)
	}
	var ans struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	jerr := json.Unmarshal(body, &ans)
	switch {
	case resp.StatusCode != http.StatusOK || ans.Error != "":
		return "", 0, fmt.Errorf("%w: HTTP %d %s", ErrExchange, resp.StatusCode, oauthReason(ans.Error, ans.Description))
	case jerr != nil || ans.AccessToken == "":
		return "", 0, fmt.Errorf("%w: an answer without an access_token", ErrExchange)
	}
	life := defaultExchangeLife
	if ans.ExpiresIn > 0 {
		life = time.Duration(min(ans.ExpiresIn, 86400)) * time.Second
	}
	return ans.AccessToken, max(life, 2*exchangeSkew), nil
}

// oauthReason is an OAuth error code and description, bounded.
func oauthReason(code, desc string) string {
	s := strings.TrimSpace(code + ": " + desc)
	s = strings.Trim(s, ": ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
