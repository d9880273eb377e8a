package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// Upstream credentials are sealed values (upstreamauth seals them with a
// key the store never sees), kept by upstream and subject.

// Credentials returns the upstream credentials in the database.
func (db *DB) Credentials() upstreamauth.Store { return &sqlCredentials{db} }

type sqlCredentials struct{ db *DB }

func (s *sqlCredentials) LoadCredential(ctx context.Context, upstream, subject string) ([]byte, error) {
	var b []byte
	err := s.db.db.QueryRowContext(ctx, `SELECT sealed FROM upstream_credentials WHERE upstream = ? AND subject = ?`, upstream, subject).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading credentials from %s: %w", s.db.path, err)
	}
	return b, nil
}

func (s *sqlCredentials) SaveCredential(ctx context.Context, upstream, subject string, sealed []byte) error {
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO upstream_credentials (upstream, subject, sealed, updated) VALUES (?, ?, ?, ?)
			ON CONFLICT (upstream, subject) DO UPDATE SET sealed = excluded.sealed, updated = excluded.updated`,
			upstream, subject, sealed, nanos(time.Now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("storing credentials in %s: %w", s.db.path, err)
	}
	return nil
}

func (s *sqlCredentials) DeleteCredential(ctx context.Context, upstream, subject string) error {
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM upstream_credentials WHERE upstream = ? AND subject = ?`, upstream, subject)
		return err
	})
	if err != nil {
		return fmt.Errorf("removing credentials from %s: %w", s.db.path, err)
	}
	return nil
}

// Credentials returns the upstream credentials in the database.
func (db *PG) Credentials() upstreamauth.Store { return &pgCredentials{db} }

type pgCredentials struct{ db *PG }

func (s *pgCredentials) LoadCredential(ctx context.Context, upstream, subject string) ([]byte, error) {
	var b []byte
	err := s.db.pool.QueryRow(ctx, `SELECT sealed FROM upstream_credentials WHERE upstream = $1 AND subject = $2`, upstream, subject).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading credentials from %s: %w", s.db.name, err)
	}
	return b, nil
}

func (s *pgCredentials) SaveCredential(ctx context.Context, upstream, subject string, sealed []byte) error {
	_, err := s.db.pool.Exec(ctx, `INSERT INTO upstream_credentials (upstream, subject, sealed, updated) VALUES ($1, $2, $3, $4)
		ON CONFLICT (upstream, subject) DO UPDATE SET sealed = excluded.sealed, updated = excluded.updated`,
		upstream, subject, sealed, nanos(time.Now()))
	if err != nil {
		return fmt.Errorf("storing credentials in %s: %w", s.db.name, err)
	}
	return nil
}

func (s *pgCredentials) DeleteCredential(ctx context.Context, upstream, subject string) error {
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM upstream_credentials WHERE upstream = $1 AND subject = $2`, upstream, subject); err != nil {
		return fmt.Errorf("removing credentials from %s: %w", s.db.name, err)
	}
	return nil
}
