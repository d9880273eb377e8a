package state

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/pgtest"
)

func openPG(t testing.TB, u string) *PG {
	t.Helper()
	db, err := OpenPostgres(context.Background(), PGOptions{URL: u})
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Two connections stand for two replicas: what one writes, the other
// reads, and the lessons' version tells it that something changed.
func TestPostgresTwoHandlesSeeEachOthersWrites(t *testing.T) {
	u := pgtest.Schema(t)
	seeEachOthersWrites(t, openPG(t, u).Lessons(), openPG(t, u).Lessons())
}

// Replicas starting at once migrate the schema once, and all of them
// open and write; IDs assigned at once never collide.
func TestPostgresConcurrentOpenMigratesOnce(t *testing.T) {
	u := pgtest.Schema(t)
	openAtOnce(t, func() (opened, error) { return OpenPostgres(context.Background(), PGOptions{URL: u}) })
	db := openPG(t, u)
	var v, rows int
	db.pool.QueryRow(t.Context(), `SELECT max(version), count(*) FROM schema_version`).Scan(&v, &rows)
	if v != len(pgMigrations) || rows != 1 {
		t.Errorf("schema_version: %d rows, version %d; want 1 row, version %d", rows, v, len(pgMigrations))
	}
	all, _ := db.Lessons().All(t.Context())
	ids := map[int64]bool{}
	for _, l := range all {
		ids[l.ID] = true
	}
	if len(all) != openers || len(ids) != openers {
		t.Errorf("got %d lessons with %d IDs, want %d (one per opener)", len(all), len(ids), openers)
	}
}

func TestPostgresNewerSchemaIsAnError(t *testing.T) {
	u := pgtest.Schema(t)
	db := openPG(t, u)
	if _, err := db.pool.Exec(t.Context(), `UPDATE schema_version SET version = 999`); err != nil {
		t.Fatal(err)
	}
	_, err := OpenPostgres(t.Context(), PGOptions{URL: u})
	if err == nil || !strings.Contains(err.Error(), "schema version 999 is newer") {
		t.Errorf("got %v, want the newer schema named", err)
	}
}

// A database that cannot be reached, or refuses the password, is an error
// naming it, and the password is in no error.
func TestPostgresUnreachableOrRefusedNeverShowsThePassword(t *testing.T) {
	const secret = "s3cr3t-pw"
	base, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	// The test server may trust loopback and so take any password: a user
	// that does not exist is refused either way.
	refused := *base
	refused.User = url.UserPassword("no_such_user", secret)
	closed := *base
	closed.User = url.UserPassword("u", secret)
	closed.Host = "127.0.0.1:1"
	for name, u := range map[string]string{
		"refused":     refused.String(),
		"unreachable": closed.String(),
		"bad url":     "postgres://u:" + secret + "@127.0.0.1:notaport/db",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := OpenPostgres(t.Context(), PGOptions{URL: u, Timeout: 5 * time.Second})
			var oe *OpenError
			if !errors.As(err, &oe) {
				t.Fatalf("got %v, want an *OpenError", err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the password: %v", err)
			}
			if name != "bad url" && !strings.Contains(err.Error(), "xxxxx@") {
				t.Errorf("got %v, want the URL named with its password redacted", err)
			}
		})
	}
}

func BenchmarkPostgresOpen(b *testing.B) {
	u := pgtest.Schema(b)
	openPG(b, u) // created and migrated once, as on every start after the first
	for b.Loop() {
		db, err := OpenPostgres(context.Background(), PGOptions{URL: u})
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

func BenchmarkPostgresLessonPut(b *testing.B) {
	benchLessonPut(b, openPG(b, pgtest.Schema(b)).Lessons())
}

// BenchmarkPostgresLessonReload is BenchmarkLessonReload on PostgreSQL.
func BenchmarkPostgresLessonReload(b *testing.B) {
	benchLessonReload(b, openPG(b, pgtest.Schema(b)).Lessons())
}

func BenchmarkPostgresLessonVersion(b *testing.B) {
	benchLessonVersion(b, openPG(b, pgtest.Schema(b)).Lessons())
}

// BenchmarkPostgresMemoryReload is BenchmarkMemoryReload on PostgreSQL.
func BenchmarkPostgresMemoryReload(b *testing.B) {
	benchMemoryReload(b, openPG(b, pgtest.Schema(b)).Lessons())
}
