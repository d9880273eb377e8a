// Package pgtest gives tests a PostgreSQL schema of their own in the test
// database named by MCP_ROUTER_TEST_POSTGRES (scripts/postgres starts
// one). Without that variable the tests that need it skip, except under
// CI (CI set), where they fail: CI must test PostgreSQL.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Env is the variable holding the test database's URL.
const Env = "MCP_ROUTER_TEST_POSTGRES"

// URL returns the test database's URL, or skips tb (fails it under CI)
// when there is none.
func URL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv(Env)
	if u == "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%s is not set: CI must test the PostgreSQL state (scripts/test starts a server with scripts/postgres)", Env)
		}
		tb.Skipf("%s is not set: PostgreSQL not tested (scripts/postgres start prints a URL to set it to)", Env)
	}
	return u
}

// Schema creates an empty schema in the test database, dropped when tb
// ends, and returns a URL whose connections use it (search_path), so that
// each test has state of its own.
func Schema(tb testing.TB) string {
	tb.Helper()
	base := URL(tb)
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("%s: %v", Env, err)
	}
	ctx := context.Background()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "test_" + hex.EncodeToString(b)
	if err := exec(ctx, base, `CREATE SCHEMA `+schema); err != nil {
		tb.Fatalf("creating schema %s: %v", schema, err)
	}
	tb.Cleanup(func() {
		if err := exec(ctx, base, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			tb.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs sql on a connection of its own.
func exec(ctx context.Context, dbURL, sql string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
