package state

import (
	"context"
	"time"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// Credentials returns the upstream credentials in the database: values
// upstreamauth sealed with a key the store never sees.
func (s stores) Credentials() upstreamauth.Store { return credentialStore(s) }

type credentialStore struct{ b engine }

func (s credentialStore) LoadCredential(ctx context.Context, upstream, subject string) ([]byte, error) {
	var b []byte
	_, err := s.b.conn.one(ctx, `SELECT sealed FROM upstream_credentials WHERE upstream = ? AND subject = ?`,
		[]any{upstream, subject}, &b)
	if err != nil {
		return nil, s.b.wrap(err, "reading credentials from")
	}
	return b, nil
}

func (s credentialStore) SaveCredential(ctx context.Context, upstream, subject string, sealed []byte) error {
	_, err := s.b.conn.exec(ctx, `INSERT INTO upstream_credentials (upstream, subject, sealed, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (upstream, subject) DO UPDATE SET sealed = excluded.sealed, updated = excluded.updated`,
		upstream, subject, sealed, nanos(time.Now()))
	return s.b.wrap(err, "storing credentials in")
}

func (s credentialStore) DeleteCredential(ctx context.Context, upstream, subject string) error {
	_, err := s.b.conn.exec(ctx, `DELETE FROM upstream_credentials WHERE upstream = ? AND subject = ?`, upstream, subject)
	return s.b.wrap(err, "removing credentials from")
}
