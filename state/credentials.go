package state

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// Credentials returns the upstream credentials in the database: values
// upstreamauth sealed with a key the store never sees.
func (s stores) Credentials() upstreamauth.Store { return credentialStore{s.b} }

type credentialStore struct{ b engine }

func (s credentialStore) LoadCredential(ctx context.Context, upstream, subject string) ([]byte, error) {
	var b []byte
	if _, err := s.b.conn.one(ctx, `SELECT sealed FROM upstream_credentials WHERE upstream = ? AND subject = ?`,
		[]any{upstream, subject}, &b); err != nil {
		return nil, fmt.Errorf("reading credentials from %s: %w", s.b.name, err)
	}
	return b, nil
}

func (s credentialStore) SaveCredential(ctx context.Context, upstream, subject string, sealed []byte) error {
	_, err := s.b.conn.exec(ctx, `INSERT INTO upstream_credentials (upstream, subject, sealed, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (upstream, subject) DO UPDATE SET sealed = excluded.sealed, updated = excluded.updated`,
		upstream, subject, sealed, nanos(time.Now()))
	if err != nil {
		return fmt.Errorf("storing credentials in %s: %w", s.b.name, err)
	}
	return nil
}

func (s credentialStore) DeleteCredential(ctx context.Context, upstream, subject string) error {
	if _, err := s.b.conn.exec(ctx, `DELETE FROM upstream_credentials WHERE upstream = ? AND subject = ?`, upstream, subject); err != nil {
		return fmt.Errorf("removing credentials from %s: %w", s.b.name, err)
	}
	return nil
}
