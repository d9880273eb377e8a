package routing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcp-router/mcp-router/internal/fakeollama"
)

// embedFunc is an Embedder in a function.
type embedFunc func(ctx context.Context, texts []string) ([][]float32, error)

func (f embedFunc) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}

// hashEmbedder embeds in-process as the fake Ollama does, and counts texts.
func hashEmbedder(count *atomic.Int64) embedFunc {
	return func(_ context.Context, texts []string) ([][]float32, error) {
		count.Add(int64(len(texts)))
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = fakeollama.Embed(t, 64)
		}
		return out, nil
	}
}

// newSemantic returns an index over e configured by opts, logging to the
// returned recorder.
func newSemantic(e Embedder, opts SemanticOptions) (*SemanticIndex, *slogRecorder) {
	logs := &slogRecorder{}
	opts.Embedder, opts.Logger = e, slog.New(logs)
	if opts.Model == "" {
		opts.Model = "nomic-embed-text"
	}
	return NewSemanticIndex(opts), logs
}

func semSchema(props string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
}

var (
	fsTools = []Tool{
		{Name: "filesystem_read_file", Description: "Read the complete contents of a file from disk.",
			InputSchema: semSchema(`"path":{"type":"string","description":"Path of the file to read"}`)},
		{Name: "filesystem_write_file", Description: "Create a new file or overwrite an existing one with new content.",
			InputSchema: semSchema(`"path":{"type":"string"},"content":{"type":"string","description":"Text to write"}`)},
		{Name: "filesystem_list_directory", Description: "List the entries of a directory.",
			InputSchema: semSchema(`"path":{"type":"string","description":"Directory to list"}`)},
	}
	weatherTools = []Tool{
		{Name: "weather_get_forecast", Description: "Get the weather forecast for a city: temperature, rain and wind.",
			InputSchema: semSchema(`"city":{"type":"string"},"days":{"type":"integer","description":"Number of days ahead"}`)},
		{Name: "weather_get_alerts", Description: "Get active severe weather alerts for a US state.",
			InputSchema: semSchema(`"state":{"type":"string","description":"Two-letter state code"}`)},
	}
)

func semNames(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

func semRank(hits []Hit, name string) int {
	for i, h := range hits {
		if h.Name == name {
			return i
		}
	}
	return -1
}

// TestSemanticRanking: the index ranks tools by the calibrated cosine of
// their vectors with the query's. The fake's vectors are near when texts
// share words, so this checks the ranking and its calibration over
// vectors from the real client, not what a model understands.
func TestSemanticRanking(t *testing.T) {
	semLeakCheck(t)
	_, e := newOllama(t, fakeollama.Options{Models: []string{"nomic-embed-text"}}, OllamaOptions{})
	s, _ := newSemantic(e, SemanticOptions{})
	ctx := t.Context()
	if err := s.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUpstream(ctx, "weather", weatherTools); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "read a file from disk", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 {
		t.Fatalf("got %d hits, want all 5 tools", len(hits))
	}
	if hits[0].Name != "filesystem_read_file" {
		t.Errorf("top hit: got %s, want filesystem_read_file (ranking %v)", hits[0].Name, semNames(hits))
	}
	for _, w := range []string{"weather_get_forecast", "weather_get_alerts"} {
		if semRank(hits, w) < semRank(hits, "filesystem_read_file") {
			t.Errorf("%s ranks above filesystem_read_file: %v", w, semNames(hits))
		}
	}
	for _, h := range hits {
		if h.Score < 0 || h.Score > 1 || h.Score != calibrateCosine(h.Raw, 0.3) {
			t.Errorf("%s: score %v for cosine %v, want the calibrated cosine in [0, 1]", h.Name, h.Score, h.Raw)
		}
	}
	if top, w := hits[0], hits[semRank(hits, "weather_get_forecast")]; top.Score < 0.35 || w.Score >= 0.35 {
		t.Errorf("scores: read_file %.2f, forecast %.2f; want the first above 0.35 and the second below", top.Score, w.Score)
	}
	if !s.Ready() {
		t.Error("Ready: got false after working embeddings, want true")
	}

	top2, err := s.Search(ctx, "weather forecast for tomorrow in Paris", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(top2) != 2 || top2[0].Name != "weather_get_forecast" {
		t.Errorf("k=2: got %v, want weather_get_forecast first of 2", semNames(top2))
	}
}

// TestSemanticTopKIsAPrefix checks that Search's best k are the first k
// of the whole ranking, on a catalog where the cosines of most tools fall
// under the floor and score 0: the selection bounds the cosine, and the
// score's ties at 0 must not let the whole catalog through, nor a tool
// out of order.
func TestSemanticTopKIsAPrefix(t *testing.T) {
	var n atomic.Int64
	s, _ := newSemantic(hashEmbedder(&n), SemanticOptions{})
	ctx := t.Context()
	var tools []Tool
	for i := range 300 {
		tools = append(tools, Tool{Name: fmt.Sprintf("tool_%03d", i), Description: fmt.Sprintf("does thing number %d with widget %d", i, i%17)})
	}
	if err := s.SetUpstream(ctx, "up", tools); err != nil {
		t.Fatal(err)
	}
	all, err := s.Search(ctx, "widget thing 5", 0)
	if err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for _, h := range all {
		if h.Score == 0 {
			zeros++
		}
	}
	if len(all) != len(tools) || zeros < 10 {
		t.Fatalf("got %d hits, %d of them scoring 0; want all %d and at least 10 under the floor", len(all), zeros, len(tools))
	}
	for _, k := range []int{1, 7, 100, len(tools) - zeros + 3} {
		got, err := s.Search(ctx, "widget thing 5", k)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(semNames(got), semNames(all[:k])) {
			t.Errorf("k=%d: got %v, want the first %d of the whole ranking %v", k, semNames(got), k, semNames(all[:k]))
		}
	}
}

func TestSemanticSetUpstreamBatches(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	s, _ := newSemantic(e, SemanticOptions{})
	tools := make([]Tool, 50)
	for i := range tools {
		tools[i] = Tool{Name: fmt.Sprintf("tool_%d", i), Description: fmt.Sprintf("does thing %d", i)}
	}
	if err := s.SetUpstream(t.Context(), "many", tools); err != nil {
		t.Fatal(err)
	}
	if got := srv.EmbedCalls(); got != 2 {
		t.Errorf("requests: got %d, want 2", got)
	}
	if got := srv.EmbeddedTexts(); got != 50 {
		t.Errorf("texts embedded: got %d, want 50", got)
	}
}

func TestSemanticVectorCache(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	store := &memVectors{}
	ctx := t.Context()
	texts := func(step func()) int {
		before := srv.EmbeddedTexts()
		step()
		return srv.EmbeddedTexts() - before
	}
	set := func(model string, tools []Tool) func() {
		return func() {
			s, logs := newSemantic(e, SemanticOptions{Model: model, Cache: store})
			if err := s.SetUpstream(ctx, "filesystem", tools); err != nil {
				t.Fatal(err)
			}
			if n := logs.count(slog.LevelWarn); n != 0 {
				t.Errorf("got %d warnings: %v", n, logs.messages(slog.LevelWarn))
			}
		}
	}
	if n := texts(set("m1", fsTools)); n != 3 {
		t.Errorf("first start: embedded %d texts, want 3", n)
	}
	if n := texts(set("m1", fsTools)); n != 0 {
		t.Errorf("restart: embedded %d texts, want 0 (all from the cache)", n)
	}
	changed := append([]Tool(nil), fsTools...)
	changed[1].Description = "Write text to a file."
	if n := texts(set("m1", changed)); n != 1 {
		t.Errorf("one description changed: embedded %d texts, want 1", n)
	}
	if n := texts(set("m2", fsTools)); n != 3 {
		t.Errorf("another model: embedded %d texts, want 3", n)
	}
	if n := texts(set("m1", changed)); n != 0 {
		t.Errorf("back to the first model: embedded %d texts, want 0", n)
	}
}

func TestSemanticUnreadableCacheWarnsOnce(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	store := &memVectors{loadErr: errors.New("database disk image is malformed")}
	s, logs := newSemantic(e, SemanticOptions{Cache: store})
	ctx := t.Context()
	if err := s.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatalf("SetUpstream over a corrupt cache: %v", err)
	}
	if err := s.SetUpstream(ctx, "weather", weatherTools); err != nil {
		t.Fatal(err)
	}
	if got := logs.messages(slog.LevelWarn); len(got) != 1 || got[0] != "ignoring embedding cache" {
		t.Errorf("warnings: got %q, want one about the cache", got)
	}
	if got := srv.EmbeddedTexts(); got != 5 {
		t.Errorf("embedded %d texts, want 5", got)
	}
	// The vectors were saved: a fresh index over a readable store embeds
	// nothing.
	store.loadErr = nil
	fresh, _ := newSemantic(e, SemanticOptions{Cache: store})
	if err := fresh.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatal(err)
	}
	if got := srv.EmbeddedTexts(); got != 5 {
		t.Errorf("after the rewrite: embedded %d texts in all, want still 5", got)
	}
}

func TestSemanticQueryCache(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	s, _ := newSemantic(e, SemanticOptions{})
	ctx := t.Context()
	if err := s.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatal(err)
	}
	before := srv.EmbedCalls()
	first, err := s.Search(ctx, "read a file", 0)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Search(ctx, "  read a file ", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.EmbedCalls() - before; got != 1 {
		t.Errorf("two searches for one query: %d embed calls, want 1", got)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("cached query ranks differently (-first +second):\n%s", diff)
	}
}

func TestSemanticQueryLRUEvictsLeastRecent(t *testing.T) {
	c := newQueryLRU(2)
	c.put("a", []float32{1})
	c.put("b", []float32{2})
	c.get("a") // b is now the least recently used
	c.put("c", []float32{3})
	for q, want := range map[string]bool{"a": true, "b": false, "c": true} {
		if _, ok := c.get(q); ok != want {
			t.Errorf("get(%q): got %v, want %v", q, ok, want)
		}
	}
}

func TestSemanticUnreachableWarnsOnce(t *testing.T) {
	for _, retry := range []time.Duration{0, -1} {
		t.Run(fmt.Sprintf("RetryAfter=%v", retry), func(t *testing.T) {
			semLeakCheck(t)
			srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
			s, logs := newSemantic(e, SemanticOptions{RetryAfter: retry})
			ctx := t.Context()
			if err := s.SetUpstream(ctx, "filesystem", fsTools); err != nil {
				t.Fatal(err)
			}
			srv.Close()
			for i := range 5 {
				hits, err := s.Search(ctx, fmt.Sprintf("query %d", i), 0)
				if !errors.Is(err, ErrSemanticUnavailable) || hits != nil {
					t.Fatalf("query %d: got %v, %v; want no hits and ErrSemanticUnavailable", i, hits, err)
				}
			}
			if got := logs.count(slog.LevelWarn); got != 1 {
				t.Errorf("got %d warnings over 5 failed queries, want 1", got)
			}
			if s.Ready() {
				t.Error("Ready: got true with the server gone, want false")
			}
		})
	}
}

func TestSemanticWarnsOncePerOutage(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	s, logs := newSemantic(e, SemanticOptions{RetryAfter: -1})
	ctx := t.Context()
	if err := s.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatal(err)
	}
	search := func(q string) error {
		_, err := s.Search(ctx, q, 0)
		return err
	}
	srv.SetFailEmbed(true)
	for _, q := range []string{"a", "b", "c"} {
		if err := search(q); !errors.Is(err, ErrSemanticUnavailable) || !strings.Contains(err.Error(), "status 500") {
			t.Fatalf("outage 1: got %v, want ErrSemanticUnavailable with the status", err)
		}
	}
	srv.SetFailEmbed(false)
	if err := search("d"); err != nil || !s.Ready() {
		t.Fatalf("after recovery: got %v, Ready %v; want nil, true", err, s.Ready())
	}
	srv.SetFailEmbed(true)
	for _, q := range []string{"e", "f"} {
		if err := search(q); !errors.Is(err, ErrSemanticUnavailable) {
			t.Fatalf("outage 2: got %v, want ErrSemanticUnavailable", err)
		}
	}
	if got := logs.count(slog.LevelWarn); got != 2 {
		t.Errorf("got %d warnings for 2 outages, want 2", got)
	}
	if got := logs.messages(slog.LevelInfo); len(got) != 1 || got[0] != "semantic routing recovered" {
		t.Errorf("info: got %q, want one recovery notice", got)
	}
}

func TestSemanticRetryAfterFailsFast(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	s, _ := newSemantic(e, SemanticOptions{RetryAfter: 10 * time.Second})
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	ctx := t.Context()
	if err := s.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(ctx, "cached query", 0); err != nil {
		t.Fatal(err)
	}
	srv.SetFailEmbed(true)
	if _, err := s.Search(ctx, "q1", 0); !errors.Is(err, ErrSemanticUnavailable) {
		t.Fatalf("got %v, want ErrSemanticUnavailable", err)
	}
	calls := srv.EmbedCalls()
	clock = clock.Add(5 * time.Second)
	if _, err := s.Search(ctx, "q2", 0); !errors.Is(err, ErrSemanticUnavailable) {
		t.Fatalf("within RetryAfter: got %v, want ErrSemanticUnavailable", err)
	}
	if got := srv.EmbedCalls(); got != calls {
		t.Errorf("within RetryAfter: %d embed calls, want none", got-calls)
	}
	if hits, err := s.Search(ctx, "cached query", 0); err != nil || len(hits) != 3 {
		t.Errorf("cached query during the outage: got %d hits, %v; want 3, nil", len(hits), err)
	}
	srv.SetFailEmbed(false)
	clock = clock.Add(6 * time.Second)
	if _, err := s.Search(ctx, "q3", 0); err != nil {
		t.Errorf("after RetryAfter: got %v, want the embedder tried again", err)
	}
}

func TestSemanticSlowOllamaTimesOut(t *testing.T) {
	semLeakCheck(t)
	store := &memVectors{}
	ctx := t.Context()
	_, fast := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	warm, _ := newSemantic(fast, SemanticOptions{Cache: store})
	if err := warm.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatal(err)
	}

	slowSrv, slow := newOllama(t, fakeollama.Options{Delay: time.Hour}, OllamaOptions{})
	s, logs := newSemantic(slow, SemanticOptions{Cache: store, Timeout: 100 * time.Millisecond})
	if err := s.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatalf("SetUpstream from the cache: %v", err)
	}
	if got := slowSrv.EmbedCalls(); got != 0 {
		t.Fatalf("SetUpstream from the cache: %d embed calls, want 0", got)
	}
	start := time.Now()
	_, err := s.Search(ctx, "read a file", 0)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Search returned after %v, want about 100ms", d)
	}
	if !errors.Is(err, ErrSemanticUnavailable) || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "no query embedding within 100ms") {
		t.Errorf("got %v, want ErrSemanticUnavailable after the 100ms timeout", err)
	}
	if logs.count(slog.LevelWarn) != 1 || s.Ready() {
		t.Errorf("got %d warnings, Ready %v; want 1, false", logs.count(slog.LevelWarn), s.Ready())
	}
}

func TestSemanticCallerCancelIsNotAnOutage(t *testing.T) {
	var n atomic.Int64
	s, logs := newSemantic(hashEmbedder(&n), SemanticOptions{})
	if err := s.SetUpstream(t.Context(), "filesystem", fsTools); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	block := embedFunc(func(ctx context.Context, _ []string) ([][]float32, error) { return nil, ctx.Err() })
	s.opts.Embedder = block
	if _, err := s.Search(ctx, "read", 0); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrSemanticUnavailable) {
		t.Errorf("got %v, want context.Canceled and ErrSemanticUnavailable", err)
	}
	if logs.count(slog.LevelWarn) != 0 || !s.Ready() {
		t.Errorf("got %d warnings, Ready %v; want 0, true", logs.count(slog.LevelWarn), s.Ready())
	}
}

func TestSemanticSetUpstreamFailureKeepsVectors(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	s, logs := newSemantic(e, SemanticOptions{RetryAfter: -1})
	ctx := t.Context()
	if err := s.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatal(err)
	}
	more := append(append([]Tool(nil), fsTools...), Tool{Name: "filesystem_delete_file", Description: "Delete a file."})
	srv.SetFailEmbed(true)
	err := s.SetUpstream(ctx, "filesystem", more)
	if err == nil || !strings.HasPrefix(err.Error(), "embedding tools of filesystem: ") {
		t.Fatalf("got %v, want an error naming the upstream", err)
	}
	srv.SetFailEmbed(false)
	hits, err := s.Search(ctx, "delete a file", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"filesystem_list_directory", "filesystem_read_file", "filesystem_write_file"},
		semNames(hits), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("after a failed SetUpstream, want the previous tools (-want +got):\n%s", diff)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	hits, err = s.Search(ctx, "delete a file", 1)
	if err != nil || len(hits) != 1 || hits[0].Name != "filesystem_delete_file" {
		t.Errorf("after Sync: got %v, %v; want filesystem_delete_file", semNames(hits), err)
	}
	if got := logs.count(slog.LevelWarn); got != 1 {
		t.Errorf("got %d warnings, want 1", got)
	}
}

func TestSemanticUpstreamNeverEmbeddedMakesSearchUnavailable(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	s, _ := newSemantic(e, SemanticOptions{RetryAfter: -1})
	ctx := t.Context()
	if err := s.SetUpstream(ctx, "filesystem", fsTools); err != nil {
		t.Fatal(err)
	}
	srv.SetFailEmbed(true)
	if err := s.SetUpstream(ctx, "weather", weatherTools); err == nil {
		t.Fatal("got nil error with embeddings failing")
	}
	srv.SetFailEmbed(false)
	_, err := s.Search(ctx, "weather forecast", 0)
	if !errors.Is(err, ErrSemanticUnavailable) || !strings.Contains(err.Error(), "tools of weather not embedded") {
		t.Fatalf("got %v, want ErrSemanticUnavailable naming weather", err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("second Sync with nothing pending: %v", err)
	}
	hits, err := s.Search(ctx, "weather forecast", 1)
	if err != nil || hits[0].Name != "weather_get_forecast" {
		t.Errorf("after Sync: got %v, %v; want weather_get_forecast", semNames(hits), err)
	}
}

func TestSemanticNewerSetUpstreamWins(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var n atomic.Int64
	hash := hashEmbedder(&n)
	e := embedFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
		if strings.Contains(texts[0], "old") {
			close(started)
			<-release
		}
		return hash(ctx, texts)
	})
	s, _ := newSemantic(e, SemanticOptions{})
	ctx := t.Context()
	done := make(chan error, 1)
	go func() {
		done <- s.SetUpstream(ctx, "u", []Tool{{Name: "old_tool", Description: "old"}})
	}()
	<-started
	if err := s.SetUpstream(ctx, "u", []Tool{{Name: "new_tool", Description: "new"}}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "tool", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"new_tool"}, semNames(hits)); diff != "" {
		t.Errorf("an older SetUpstream finishing last replaced a newer one (-want +got):\n%s", diff)
	}
}

func TestSemanticUpstreamsAndNames(t *testing.T) {
	var n atomic.Int64
	s, _ := newSemantic(hashEmbedder(&n), SemanticOptions{})
	ctx := t.Context()
	search := func() []string {
		t.Helper()
		hits, err := s.Search(ctx, "tool", 0)
		if err != nil {
			t.Fatal(err)
		}
		return semNames(hits)
	}
	if hits, err := s.Search(ctx, "anything", 0); hits != nil || err != nil || n.Load() != 0 {
		t.Errorf("empty index: got %v, %v after %d texts; want nothing, no embedding", hits, err, n.Load())
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SetUpstream(ctx, "a", []Tool{{Name: "x", Description: "tool x"}, {Name: "y", Description: "tool y"}, {Name: "x", Description: "dup"}}))
	if got := search(); len(got) != 2 {
		t.Errorf("a repeated name: got %v, want x and y once", got)
	}
	must(s.SetUpstream(ctx, "b", []Tool{{Name: "x", Description: "tool x of b"}}))
	if got := search(); len(got) != 2 {
		t.Errorf("a name another upstream held: got %v, want x once and y", got)
	}
	must(s.SetUpstream(ctx, "a", nil))
	if diff := cmp.Diff([]string{"x"}, search()); diff != "" {
		t.Errorf("after removing a (-want +got):\n%s", diff)
	}
	if hits, err := s.Search(ctx, "   ", 0); hits != nil || err != nil {
		t.Errorf("blank query: got %v, %v; want nothing", hits, err)
	}
}

func TestSemanticEmbedsEachDistinctTextOnce(t *testing.T) {
	var n atomic.Int64
	s, _ := newSemantic(hashEmbedder(&n), SemanticOptions{})
	tools := []Tool{{Name: "read_file", Description: "Read."}, {Name: "read-file", Description: "Read."}}
	if err := s.SetUpstream(t.Context(), "u", tools); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("two tools with one text: embedded %d texts, want 1", got)
	}
	hits, err := s.Search(t.Context(), "read", 0)
	if err != nil || len(hits) != 2 {
		t.Errorf("got %v, %v; want both tools", semNames(hits), err)
	}
}

func TestSemanticCacheWriteFailureIsNotFatal(t *testing.T) {
	var n atomic.Int64
	store := &memVectors{saveErr: errors.New("disk I/O error")}
	s, logs := newSemantic(hashEmbedder(&n), SemanticOptions{Cache: store})
	if err := s.SetUpstream(t.Context(), "filesystem", fsTools); err != nil {
		t.Fatalf("got %v, want the vectors kept in memory", err)
	}
	if !slices.Contains(logs.messages(slog.LevelWarn), "writing embedding cache") {
		t.Errorf("warnings: got %q, want one about writing the cache", logs.messages(slog.LevelWarn))
	}
	if hits, err := s.Search(t.Context(), "read a file", 1); err != nil || hits[0].Name != "filesystem_read_file" {
		t.Errorf("got %v, %v; want filesystem_read_file", semNames(hits), err)
	}
}

func TestSemanticBadEmbedderAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		vecs [][]float32
		want string
	}{
		{"too few", [][]float32{{1}}, "embedder returned 1 vectors for 3 texts"},
		{"ragged", [][]float32{{1, 0}, {1}, {0, 1}}, "embedder returned vectors of 2 and 1 dimensions"},
		{"empty vector", [][]float32{{}, {}, {}}, "embedder returned vectors of 0 and 0 dimensions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := embedFunc(func(context.Context, []string) ([][]float32, error) { return tc.vecs, nil })
			s, logs := newSemantic(e, SemanticOptions{})
			err := s.SetUpstream(t.Context(), "filesystem", fsTools)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			if logs.count(slog.LevelWarn) != 1 || s.Ready() {
				t.Errorf("got %d warnings, Ready %v; want 1, false", logs.count(slog.LevelWarn), s.Ready())
			}
		})
	}
}

func TestSemanticConcurrentUse(t *testing.T) {
	var n atomic.Int64
	s, _ := newSemantic(hashEmbedder(&n), SemanticOptions{Cache: &memVectors{}})
	s.queries = newQueryLRU(4) // evictions under concurrent use
	ctx := t.Context()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				tools := []Tool{{Name: fmt.Sprintf("u%d_tool", g), Description: fmt.Sprintf("version %d", i%3)}}
				if err := s.SetUpstream(ctx, fmt.Sprintf("u%d", g), tools); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Go(func() {
			for i := range 20 {
				if _, err := s.Search(ctx, fmt.Sprintf("query %d", i%6), 3); err != nil {
					t.Error(err)
				}
				s.Ready()
			}
		})
	}
	wg.Wait()
	hits, err := s.Search(ctx, "tool", 0)
	if err != nil || len(hits) != 4 {
		t.Errorf("got %v, %v; want the 4 upstreams' tools", semNames(hits), err)
	}
}

func TestSemanticToolText(t *testing.T) {
	tool := Tool{
		Name:        "fs_readFile",
		Description: " Read a file. ",
		InputSchema: semSchema(`"path":{"type":"string","title":"Path","description":"File to read"},"mode":{"type":"string","enum":["text","binary"]}`),
	}
	want := "fs read file: Read a file.\nparameter mode: text; binary\nparameter path: Path; File to read"
	if got := toolText(tool); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	reordered := tool
	reordered.InputSchema = json.RawMessage(`{"properties":{"mode":{"enum":["text","binary"],"type":"string"},"path":{"description":"File to read","title":"Path","type":"string"}},"type":"object"}`)
	if got := toolText(reordered); got != want {
		t.Errorf("schema keys reordered: got %q, want the same text", got)
	}
	if got := toolText(Tool{Name: "get-weather"}); got != "get weather" {
		t.Errorf("no description or schema: got %q, want %q", got, "get weather")
	}
}

func TestSemanticCalibration(t *testing.T) {
	for _, tc := range []struct {
		cos, floor, want float64
	}{
		{0.3, 0.3, 0},
		{0.1, 0.3, 0},
		{-0.5, 0.3, 0},
		{0.65, 0.3, 0.5},
		{1, 0.3, 1},
		{1.01, 0.3, 1}, // float error past 1
		{0.75, 0.5, 0.5},
		{math.NaN(), 0.3, 0},
	} {
		if got := calibrateCosine(tc.cos, tc.floor); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("calibrateCosine(%v, %v): got %v, want %v", tc.cos, tc.floor, got, tc.want)
		}
	}
}

func TestFuseHits(t *testing.T) {
	h := func(name string, score float64) Hit { return Hit{Name: name, Score: score, Raw: score} }
	for _, tc := range []struct {
		name     string
		lex, sem []Hit
		w        float64
		want     []Hit
	}{
		{
			name: "equal weights average the two scores",
			lex:  []Hit{h("a", 0.8), h("b", 0.2)},
			sem:  []Hit{h("a", 0.6), h("c", 0.9)},
			w:    0.5,
			want: []Hit{h("a", 0.7), h("c", 0.45), h("b", 0.1)},
		},
		{
			name: "weight 0 is lexical alone",
			lex:  []Hit{h("a", 0.8)},
			sem:  []Hit{h("b", 0.9)},
			w:    0,
			want: []Hit{h("a", 0.8), h("b", 0)},
		},
		{
			name: "weight 1 is semantic alone",
			lex:  []Hit{h("a", 0.8)},
			sem:  []Hit{h("b", 0.9), h("a", 0.1)},
			w:    1,
			want: []Hit{h("b", 0.9), h("a", 0.1)},
		},
		{
			name: "agreement keeps the calibrated score",
			lex:  []Hit{h("a", 0.4)},
			sem:  []Hit{h("a", 0.4)},
			w:    0.3,
			want: []Hit{h("a", 0.4)},
		},
		{
			name: "weight above 1 is clamped",
			lex:  []Hit{h("a", 0.8)},
			sem:  []Hit{h("a", 0.2)},
			w:    7,
			want: []Hit{h("a", 0.2)},
		},
		{
			name: "negative and NaN weights are lexical alone",
			lex:  []Hit{h("a", 0.8)},
			sem:  []Hit{h("a", 0.2)},
			w:    math.NaN(),
			want: []Hit{h("a", 0.8)},
		},
		{
			name: "a repeated name keeps its best score",
			lex:  []Hit{h("a", 0.2), h("a", 0.6)},
			sem:  []Hit{h("a", 0.4), h("a", 0.2)},
			w:    0.5,
			want: []Hit{h("a", 0.5)},
		},
		{
			name: "scores outside [0, 1] are clamped",
			lex:  []Hit{h("a", 1.4), h("b", -0.3)},
			sem:  nil,
			w:    0.25,
			want: []Hit{h("a", 0.75), h("b", 0)},
		},
		{
			name: "ties go by name",
			lex:  []Hit{h("b", 0.5), h("a", 0.5)},
			sem:  []Hit{h("c", 0.5)},
			w:    0.5,
			want: []Hit{h("a", 0.25), h("b", 0.25), h("c", 0.25)},
		},
		{
			name: "no hits",
			want: []Hit{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FuseHits(tc.lex, tc.sem, tc.w)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9), cmpopts.IgnoreFields(Hit{}, "Coverage", "Raw")); diff != "" {
				t.Errorf("FuseHits (-want +got):\n%s", diff)
			}
		})
	}
	// Raw and the request's evidence stay the lexical arm's: abstention
	// reads them with embeddings as without.
	rw := &RequestWords{Known: []string{"x"}}
	kept := FuseHits([]Hit{{Name: "a", Score: 0.8, Raw: 7, Foreign: 2, Request: rw, Words: 2, Matched: 1}}, []Hit{h("b", 0.9)}, 0.5)
	for _, g := range kept {
		if g.Request != rw || g.Foreign != 2 {
			t.Errorf("%s: request %v, foreign %d; want the lexical arm's on every fused hit", g.Name, g.Request, g.Foreign)
		}
		if g.Name == "a" && (g.Raw != 7 || g.Words != 2 || g.Matched != 1) {
			t.Errorf("a: raw %v, words %d, matched %d; want the lexical hit's 7, 2, 1", g.Raw, g.Words, g.Matched)
		}
	}
	neg := FuseHits([]Hit{h("a", 0.8)}, []Hit{h("a", 0.2)}, -2)
	if neg[0].Score != 0.8 {
		t.Errorf("negative weight: got %v, want 0.8 (lexical alone)", neg[0].Score)
	}
}

// BenchmarkSemanticSearch ranks 10k tools of 768 dimensions for a cached
// query: the per-request cost of semantic routing.
func BenchmarkSemanticSearch(b *testing.B) {
	e := embedFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range texts {
			out[i] = unitVec(768, i)
		}
		return out, nil
	})
	s := NewSemanticIndex(SemanticOptions{Embedder: e})
	tools := make([]Tool, 10000)
	for i := range tools {
		tools[i] = Tool{Name: fmt.Sprintf("tool_%d", i)}
	}
	ctx := b.Context()
	if err := s.SetUpstream(ctx, "big", tools); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Search(ctx, "query", 10); err != nil {
			b.Fatal(err)
		}
	}
}

// The embedder here is a fake Ollama whose vectors are near when texts
// share words: the scores show the wiring, not a model's judgement.
func ExampleSemanticIndex() {
	srv := fakeollama.New(fakeollama.Options{Models: []string{"nomic-embed-text"}})
	defer srv.Close()
	embedder, err := NewOllamaEmbedder(OllamaOptions{URL: srv.URL(), Model: "nomic-embed-text", HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err)
		return
	}
	idx := NewSemanticIndex(SemanticOptions{Embedder: embedder, Model: "nomic-embed-text"})
	ctx := context.Background()
	for upstream, tools := range map[string][]Tool{"filesystem": fsTools, "weather": weatherTools} {
		if err := idx.SetUpstream(ctx, upstream, tools); err != nil {
			fmt.Println(err)
			return
		}
	}
	hits, err := idx.Search(ctx, "read a file from disk", 2)
	if err != nil {
		fmt.Println(err) // wraps ErrSemanticUnavailable: rank lexically
		return
	}
	for _, h := range hits {
		fmt.Printf("%s score %.2f cosine %.2f\n", h.Name, h.Score, h.Raw)
	}
	// Output:
	// filesystem_read_file score 0.65 cosine 0.75
	// filesystem_write_file score 0.00 cosine 0.18
}

func ExampleFuseHits() {
	lexical := []Hit{{Name: "fs_read_file", Score: 0.9}, {Name: "logs_query", Score: 0.4}}
	semantic := []Hit{{Name: "fs_read_file", Score: 0.7}, {Name: "fs_stat", Score: 0.5}, {Name: "logs_query", Score: 0.1}}
	// When semantic search fails (ErrSemanticUnavailable), rank with the
	// lexical hits alone instead of fusing.
	for _, h := range FuseHits(lexical, semantic, 0.5) {
		fmt.Printf("%s %.2f\n", h.Name, h.Score)
	}
	// Output:
	// fs_read_file 0.80
	// fs_stat 0.25
	// logs_query 0.25
}

// TestFuseHitsCoverage: a fused hit's coverage combines the lexical
// coverage and the semantic score with the fusion's weight, so that the
// router's abstention reads the same scale with embeddings on.
func TestFuseHitsCoverage(t *testing.T) {
	got := FuseHits([]Hit{{Name: "a", Score: 0.8, Coverage: 0.6}}, []Hit{{Name: "a", Score: 0.2}, {Name: "b", Score: 0.9}}, 0.5)
	want := map[string]float64{"a": 0.4, "b": 0.45}
	for _, h := range got {
		if math.Abs(h.Coverage-want[h.Name]) > 1e-9 {
			t.Errorf("%s: coverage %.3f, want %.3f", h.Name, h.Coverage, want[h.Name])
		}
	}
}

// TestDescendingOrdersCosinesTheOtherWay checks the integers the
// semantic arm selects its top k by: the higher the cosine, the smaller.
func TestDescendingOrdersCosinesTheOtherWay(t *testing.T) {
	xs := []float64{math.Inf(-1), -1, -0.5, -1e-300, 0, 1e-300, 0.3, 0.99, 1, math.Inf(1)}
	for i := 1; i < len(xs); i++ {
		if descending(xs[i]) >= descending(xs[i-1]) {
			t.Errorf("descending(%g) = %#x, not below descending(%g) = %#x", xs[i], descending(xs[i]), xs[i-1], descending(xs[i-1]))
		}
	}
}
