package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-router/mcp-router/routing/lessons"
)

// TestPostgresEnv names the variable holding the URL of a PostgreSQL
// database the tests may create schemas in (scripts/postgres starts one).
// Without it the PostgreSQL tests skip, except under CI, where they fail.
const TestPostgresEnv = "MCP_ROUTER_TEST_POSTGRES"

// testPGURL returns the test database's URL, or skips (fails under CI)
// when there is none.
func testPGURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(TestPostgresEnv)
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: CI must test the PostgreSQL backend (scripts/test starts a server with scripts/postgres)", TestPostgresEnv)
		}
		t.Skipf("%s is not set: PostgreSQL backend not tested (scripts/postgres start prints a URL to set it to)", TestPostgresEnv)
	}
	return u
}

// newPGSchema creates an empty schema in the test database, dropped at
// the end of the test, and returns a URL whose connections use it: each
// test gets its own state.
func newPGSchema(t testing.TB) string {
	t.Helper()
	base := testPGURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to %s: %v", TestPostgresEnv, err)
	}
	defer conn.Close(ctx)
	schema := "test_" + hex.EncodeToString([]byte(rand.Text())[:6])
	schema = strings.ToLower(schema)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", TestPostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

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
	u := newPGSchema(t)
	a, b := openPG(t, u), openPG(t, u)
	ctx := t.Context()
	before := versionOf(t, b.Lessons())
	if _, err := a.Lessons().Put(ctx, lesson("read a file", "fs_read")); err != nil {
		t.Fatal(err)
	}
	if versionOf(t, b.Lessons()) == before {
		t.Error("b's version did not change after a's write")
	}
	all, err := b.Lessons().All(ctx)
	if err != nil || len(all) != 1 || all[0].Tool != "fs_read" {
		t.Errorf("b reads %+v, %v; want a's lesson", all, err)
	}
}

// Replicas starting at once migrate the schema once, and all of them
// open and write; IDs assigned at once never collide.
func TestPostgresConcurrentOpenMigratesOnce(t *testing.T) {
	u := newPGSchema(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			db, err := OpenPostgres(context.Background(), PGOptions{URL: u})
			if err == nil {
				_, err = db.Lessons().Put(context.Background(), lesson("q", "t"))
				err = errors.Join(err, db.Close())
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
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
	if len(all) != len(errs) || len(ids) != len(errs) {
		t.Errorf("got %d lessons with %d IDs, want %d (one per opener)", len(all), len(ids), len(errs))
	}
}

func TestPostgresNewerSchemaIsAnError(t *testing.T) {
	u := newPGSchema(t)
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
	base, err := url.Parse(testPGURL(t))
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
	u := newPGSchema(b)
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
	s := openPG(b, newPGSchema(b)).Lessons()
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Put(ctx, lesson("read the config file", "fs_read")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPostgresLessonReload is BenchmarkLessonReload on PostgreSQL.
func BenchmarkPostgresLessonReload(b *testing.B) {
	s := openPG(b, newPGSchema(b)).Lessons()
	ctx := context.Background()
	for range lessons.DefaultMaxLessons {
		s.Put(ctx, lesson("read the config file of the service", "fs_read"))
	}
	v := s.(interface {
		Version(context.Context) (int64, error)
	})
	for b.Loop() {
		if _, err := v.Version(ctx); err != nil {
			b.Fatal(err)
		}
		if all, err := s.All(ctx); err != nil || len(all) != lessons.DefaultMaxLessons {
			b.Fatal(len(all), err)
		}
	}
}

func BenchmarkPostgresLessonVersion(b *testing.B) {
	s := openPG(b, newPGSchema(b)).Lessons().(interface {
		Version(context.Context) (int64, error)
	})
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Version(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPostgresMemoryReload is BenchmarkMemoryReload on PostgreSQL.
func BenchmarkPostgresMemoryReload(b *testing.B) {
	db := openPG(b, newPGSchema(b))
	ctx := context.Background()
	for i := range lessons.DefaultMaxLessons - 1 {
		db.Lessons().Put(ctx, lesson(fmt.Sprintf("read the config file of service %d", i), "fs_read"))
	}
	other, _ := lessons.NewMemory(ctx, db.Lessons(), lessons.MemoryOptions{})
	mem, _ := lessons.NewMemory(ctx, db.Lessons(), lessons.MemoryOptions{})
	for b.Loop() {
		b.StopTimer()
		if _, err := other.Learn(ctx, lessons.Lesson{Query: "weather in Paris", Tool: "weather_get", Polarity: lessons.Use}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := mem.Sync(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if mem.Len() != lessons.DefaultMaxLessons {
		b.Fatalf("%d lessons", mem.Len())
	}
}
