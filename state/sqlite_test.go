package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-router/mcp-router/routing/lessons"
)

func TestOpenCreatesAPrivateFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	db := openDB(t, dir)
	fi, err := os.Stat(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state.db mode %v, want 0600", fi.Mode().Perm())
	}
	var mode string
	db.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal_mode %q, want wal", mode)
	}
}

// Two handles on one file stand for two processes: what one writes, the
// other reads, and the lessons' version tells it that something changed.
func TestTwoHandlesSeeEachOthersWrites(t *testing.T) {
	dir := t.TempDir()
	seeEachOthersWrites(t, openDB(t, dir).Lessons(), openDB(t, dir).Lessons())
}

// Processes starting at once migrate the schema once, and all of them
// open.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	dir := t.TempDir()
	openAtOnce(t, func() (opened, error) { return Open(context.Background(), Options{Dir: dir}) })
	db := openDB(t, dir)
	var v int
	db.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v)
	var rows int
	db.db.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&rows)
	if v != len(migrations) || rows != 1 {
		t.Errorf("schema_version: %d rows, version %d; want 1 row, version %d", rows, v, len(migrations))
	}
	if all, _ := db.Lessons().All(t.Context()); len(all) != openers {
		t.Errorf("got %d lessons, want %d (one per opener)", len(all), openers)
	}
}

func TestCorruptFileIsAnErrorAndLeftAlone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	junk := bytes.Repeat([]byte("not a database, but someone's data. "), 200)
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(t.Context(), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want an error naming %s", err, path)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, junk) {
		t.Error("the corrupt file was changed")
	}
}

func TestReadOnlyDirIsAnError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to read-only directories")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	_, err := Open(t.Context(), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, FileName)) {
		t.Errorf("got %v, want an error naming state.db", err)
	}
}

func TestNewerSchemaIsAnError(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	db.db.Exec(`UPDATE schema_version SET version = 999`)
	db.Close()
	_, err := Open(t.Context(), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "schema version 999 is newer") {
		t.Errorf("got %v, want the newer schema named", err)
	}
}

func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	openDB(b, dir) // created and migrated once, as on every start after the first
	for b.Loop() {
		db, err := Open(context.Background(), Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

func BenchmarkLessonPut(b *testing.B) {
	benchLessonPut(b, openDB(b, b.TempDir()).Lessons())
}

// BenchmarkLessonReload is what a Memory does when another process
// changed the lessons: read the version, then all of them (1000, the
// default cap).
func BenchmarkLessonReload(b *testing.B) {
	benchLessonReload(b, openDB(b, b.TempDir()).Lessons())
}

func BenchmarkLessonVersion(b *testing.B) {
	benchLessonVersion(b, openDB(b, b.TempDir()).Lessons())
}

// BenchmarkMemoryReload is a gateway noticing that another process wrote
// a lesson: its Memory reloads and re-indexes 1000 lessons from state.db.
func BenchmarkMemoryReload(b *testing.B) {
	benchMemoryReload(b, openDB(b, b.TempDir()).Lessons())
}

// opened is a store as openAtOnce uses it.
type opened interface {
	Lessons() lessons.Store
	Close() error
}

// openers is how many openAtOnce runs at once.
const openers = 8

// openAtOnce opens the store openers times at once, each opener putting a lesson
// and closing it, and fails the test for each that could not.
func openAtOnce(t *testing.T, open func() (opened, error)) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, openers)
	for i := range errs {
		wg.Go(func() {
			db, err := open()
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
}

// seeEachOthersWrites checks two handles on one store, standing for two
// processes or replicas: what a writes, b reads, and b's lessons'
// version tells it that something changed.
func seeEachOthersWrites(t *testing.T, a, b lessons.Store) {
	t.Helper()
	ctx := t.Context()
	before := versionOf(t, b)
	if _, err := a.Put(ctx, lesson("read a file", "fs_read")); err != nil {
		t.Fatal(err)
	}
	if versionOf(t, b) == before {
		t.Error("b's version did not change after a's write")
	}
	all, err := b.All(ctx)
	if err != nil || len(all) != 1 || all[0].Tool != "fs_read" {
		t.Errorf("b reads %+v, %v; want a's lesson", all, err)
	}
}

// versioned is a lessons.Store with its change counter.
type versioned interface {
	lessons.Store
	Version(context.Context) (int64, error)
}

func benchLessonPut(b *testing.B, s lessons.Store) {
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Put(ctx, lesson("read the config file", "fs_read")); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLessonReload is what a Memory does when another process changed
// the lessons: read the version, then all of them (1000, the default cap).
func benchLessonReload(b *testing.B, s lessons.Store) {
	ctx := context.Background()
	for range lessons.DefaultMaxLessons {
		s.Put(ctx, lesson("read the config file of the service", "fs_read"))
	}
	v := s.(versioned)
	for b.Loop() {
		if _, err := v.Version(ctx); err != nil {
			b.Fatal(err)
		}
		if all, err := s.All(ctx); err != nil || len(all) != lessons.DefaultMaxLessons {
			b.Fatal(len(all), err)
		}
	}
}

func benchLessonVersion(b *testing.B, s lessons.Store) {
	v := s.(versioned)
	ctx := context.Background()
	for b.Loop() {
		if _, err := v.Version(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// benchMemoryReload is a gateway noticing that another process wrote a
// lesson: its Memory reloads and re-indexes 1000 lessons from s.
func benchMemoryReload(b *testing.B, s lessons.Store) {
	ctx := context.Background()
	for i := range lessons.DefaultMaxLessons - 1 {
		s.Put(ctx, lesson(fmt.Sprintf("read the config file of service %d", i), "fs_read"))
	}
	other, _ := lessons.NewMemory(ctx, s, lessons.MemoryOptions{})
	mem, _ := lessons.NewMemory(ctx, s, lessons.MemoryOptions{})
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

// Two stores in memory never share their state, and neither writes a
// file.
func TestOpenMemoryStoresAreSeparateAndWriteNoFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	a, b := openMemory(t), openMemory(t)
	if _, err := a.Lessons().Put(t.Context(), lesson("q", "alpha_echo")); err != nil {
		t.Fatal(err)
	}
	if all, err := b.Lessons().All(t.Context()); err != nil || len(all) != 0 {
		t.Fatalf("the other store's lessons: %v, %v; want none", all, err)
	}
	if all, err := a.Lessons().All(t.Context()); err != nil || len(all) != 1 {
		t.Fatalf("the store's own lessons: %v, %v; want the one put", all, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("files written by stores in memory: %v", ents)
	}
}
