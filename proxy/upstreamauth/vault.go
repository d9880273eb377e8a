package upstreamauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// Store keeps sealed credentials by audience (see [Audience]) and
// subject; it never sees a token in the clear.
type Store interface {
	// LoadCredential returns the sealed value, or nil and no error when
	// there is none.
	LoadCredential(ctx context.Context, upstream, subject string) ([]byte, error)
	SaveCredential(ctx context.Context, upstream, subject string, sealed []byte) error
	DeleteCredential(ctx context.Context, upstream, subject string) error
}

// ErrNoLogin is returned for an upstream with no stored login.
var ErrNoLogin = errors.New("no login stored")

// Record is what a login leaves: the tokens and the client registration
// that refreshes them.
type Record struct {
	Token transport.Token `json:"token"`
	// ClientID, ClientSecret and AuthMethod are the client the tokens were
	// issued to.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthMethod   string `json:"auth_method,omitempty"`
	// ResourceMetadataURL is the protected resource metadata the upstream
	// named in its challenge, if it named one.
	ResourceMetadataURL string `json:"resource_metadata_url,omitempty"`
	// ResourceMetadataRoot is where the metadata was found when only the
	// root well-known URL serves it (see rootAlias).
	ResourceMetadataRoot string `json:"resource_metadata_root,omitempty"`
	// Issuer and TokenEndpoint are where the login was made: its secrets
	// go to that token endpoint only (see pinTokenEndpoint).
	Issuer        string   `json:"issuer,omitempty"`
	TokenEndpoint string   `json:"token_endpoint,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	// ScopesNeeded are scopes the upstream asked for since (403
	// insufficient_scope); the next login asks for them too.
	ScopesNeeded []string `json:"scopes_needed,omitempty"`
}

// LogValue keeps the record's secrets out of logs.
func (r Record) LogValue() slog.Value {
	return slog.GroupValue(slog.String("client_id", r.ClientID), slog.Time("expires_at", r.Token.ExpiresAt),
		slog.Bool("refreshable", r.Token.RefreshToken != ""))
}

// Vault seals records into a Store, keeping what it read for cacheFor (a
// logout by another process takes effect within it).
type Vault struct {
	store    Store
	seal     *sealer
	cacheFor time.Duration

	mu    sync.Mutex
	cache map[[2]string]cachedRecord
}

type cachedRecord struct {
	rec *Record // nil: none stored
	at  time.Time
}

// DefaultCacheFor is how long a Vault trusts what it read.
const DefaultCacheFor = 10 * time.Second

// NewVault seals with key (see LoadKey) into store; cacheFor 0 means
// DefaultCacheFor, negative means no cache.
func NewVault(store Store, key []byte, cacheFor time.Duration) (*Vault, error) {
	s, err := newSealer(key)
	if err != nil {
		return nil, err
	}
	if cacheFor == 0 {
		cacheFor = DefaultCacheFor
	}
	return &Vault{store: store, seal: s, cacheFor: cacheFor, cache: make(map[[2]string]cachedRecord)}, nil
}

// Load returns the login to the upstream at resource (its URL) for
// subject ("" is the gateway's own login), or ErrNoLogin.
func (v *Vault) Load(ctx context.Context, resource, subject string) (*Record, error) {
	upstream, err := Audience(resource)
	if err != nil {
		return nil, err
	}
	k := [2]string{upstream, subject}
	v.mu.Lock()
	c, ok := v.cache[k]
	v.mu.Unlock()
	if ok && time.Since(c.at) < v.cacheFor {
		return found(c.rec)
	}
	sealed, err := v.store.LoadCredential(ctx, upstream, subject)
	if err != nil {
		return nil, fmt.Errorf("reading the login of %s: %w", upstream, err)
	}
	var rec *Record
	if sealed != nil {
		plain, err := v.seal.open(upstream, subject, sealed)
		if err != nil {
			return nil, fmt.Errorf("the login of %s: %w", upstream, err)
		}
		rec = new(Record)
		if err := json.Unmarshal(plain, rec); err != nil {
			return nil, fmt.Errorf("the login of %s: unreadable record (log in again)", upstream)
		}
	}
	v.remember(k, rec)
	return found(rec)
}

func found(rec *Record) (*Record, error) {
	if rec == nil {
		return nil, ErrNoLogin
	}
	cp := *rec
	return &cp, nil
}

func (v *Vault) remember(k [2]string, rec *Record) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= maxCached {
		clear(v.cache)
	}
	v.cache[k] = cachedRecord{rec: rec, at: time.Now()}
}

// maxCached bounds the records a Vault keeps in memory.
const maxCached = 4096

// Save stores rec as the login to the upstream at resource for subject.
func (v *Vault) Save(ctx context.Context, resource, subject string, rec *Record) error {
	upstream, err := Audience(resource)
	if err != nil {
		return err
	}
	plain, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := v.store.SaveCredential(ctx, upstream, subject, v.seal.seal(upstream, subject, plain)); err != nil {
		return fmt.Errorf("storing the login of %s: %w", upstream, err)
	}
	cp := *rec
	v.remember([2]string{upstream, subject}, &cp)
	return nil
}

// Delete forgets the login to the upstream at resource for subject.
func (v *Vault) Delete(ctx context.Context, resource, subject string) error {
	upstream, err := Audience(resource)
	if err != nil {
		return err
	}
	if err := v.store.DeleteCredential(ctx, upstream, subject); err != nil {
		return fmt.Errorf("removing the login of %s: %w", upstream, err)
	}
	v.remember([2]string{upstream, subject}, nil)
	return nil
}

// tokenStore is mcp-go's TokenStore over one record of a Vault.
type tokenStore struct {
	vault             *Vault
	resource, subject string
}

var _ transport.TokenStore = tokenStore{}

func (s tokenStore) GetToken(ctx context.Context) (*transport.Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec, err := s.vault.Load(ctx, s.resource, s.subject)
	if errors.Is(err, ErrNoLogin) {
		return nil, transport.ErrNoToken
	}
	if err != nil {
		return nil, err
	}
	return &rec.Token, nil
}

// SaveToken keeps the record's client and, when a refresh answer leaves
// the refresh token out (RFC 6749 lets it), the one it had.
func (s tokenStore) SaveToken(ctx context.Context, tok *transport.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rec, err := s.vault.Load(ctx, s.resource, s.subject)
	if err != nil {
		return err // logged out meanwhile: do not bring the login back
	}
	refresh := rec.Token.RefreshToken
	rec.Token = *tok
	if rec.Token.RefreshToken == "" {
		rec.Token.RefreshToken = refresh
	}
	return s.vault.Save(ctx, s.resource, s.subject, rec)
}

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
