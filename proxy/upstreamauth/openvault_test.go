package upstreamauth

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// mapStore is a Store in memory.
type mapStore struct {
	mu sync.Mutex
	m  map[[2]string][]byte
}

func (s *mapStore) LoadCredential(_ context.Context, upstream, subject string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[[2]string{upstream, subject}], nil
}

func (s *mapStore) SaveCredential(_ context.Context, upstream, subject string, sealed []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[[2]string{upstream, subject}] = sealed
	return nil
}

func (s *mapStore) DeleteCredential(_ context.Context, upstream, subject string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, [2]string{upstream, subject})
	return nil
}

// An Authorizer made before the token key existed opens the vault once
// it does, then sends its login; it does not try again right after a try
// found no key, and concurrent requests open it once.
func TestAuthorizerOpensTheVaultOnceTheKeyExists(t *testing.T) {
	ctx := t.Context()
	vault, err := NewVault(&mapStore{m: map[[2]string][]byte{}}, bytes.Repeat([]byte{7}, keySize), -1)
	if err != nil {
		t.Fatal(err)
	}
	const token = "tok-0123456789abcdef"
	if err := vault.Save(ctx, "http://127.0.0.1:1/mcp", "", &Record{Token: transport.Token{AccessToken: token, TokenType: "Bearer",
		ExpiresAt: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	var tries atomic.Int32
	var keyMade atomic.Bool
	a := NewAuthorizer(AuthorizerOptions{Upstream: "notes", URL: "http://127.0.0.1:1/mcp", OpenVault: func() (*Vault, error) {
		tries.Add(1)
		if !keyMade.Load() {
			return nil, ErrNoKey
		}
		return vault, nil
	}})
	if h := a.Header(ctx); h != nil {
		t.Fatalf("before the key: got %v, want no header", h)
	}
	keyMade.Store(true)
	a.mu.Lock()
	a.vaultTry = time.Now().Add(time.Hour) // as if the last try were just now, whatever the clock does
	a.mu.Unlock()
	if h := a.Header(ctx); h != nil || tries.Load() != 1 {
		t.Fatalf("right after a try found no key: got %v after %d tries, want no header and no new try", h, tries.Load())
	}

	a.mu.Lock()
	a.vaultTry = time.Time{} // as if the last try were long ago
	a.mu.Unlock()
	var wg sync.WaitGroup
	got := make([]map[string]string, 8)
	for i := range got {
		wg.Go(func() { got[i] = a.Header(ctx) })
	}
	wg.Wait()
	for _, h := range got {
		if h["Authorization"] != "Bearer "+token {
			t.Errorf("after the key: got %v, want the login's token", h)
		}
	}
	if n := tries.Load(); n != 2 {
		t.Errorf("opening the vault: %d tries in all, want 2", n)
	}
}
