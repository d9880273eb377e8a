package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// TestSoak sends 10,000 calls at concurrency 32 through the proxy: four
// client sessions over streamable HTTP (the official Go SDK's client, through
// the Guard with its default bounds), eight
// callers each, to a stdio upstream that is made to crash every 1,000
// calls and to an in-process one. Every call must be answered (a result,
// or an error result naming its kind), and goroutines, heap and RSS must
// come back to where they were.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	const calls, sessions, perSession, crashEvery = 10000, 4, 8, 1000
	const conc = sessions * perSession
	idle := runtime.NumGoroutine() // before the proxy exists
	// With every bound on input from outside set, well below its default
	// and well above what the soak sends.
	bounded := func(u UpstreamConfig) UpstreamConfig {
		u.MaxMessageBytes, u.MaxErrorBodyBytes, u.MaxListingBytes, u.MaxListingItems = 256<<10, 16<<10, 1<<20, 200
		return u
	}
	h := startHub(t, bounded(stdioFake("soak")), bounded(builtinFake("steady")))
	srv := NewServer(ServerOptions{Hub: h,
		Inputs: InputLimits{MaxQueryBytes: 1 << 10, MaxNoteBytes: 256, MaxContextBytes: 4 << 10},
		Executor: executor.Options{MaxTextBytes: 64 << 10, MaxExpandedBytes: 1 << 20, MaxResultBytes: 1 << 20,
			MaxForeachItems: 16, MaxCalls: 32}})
	t.Cleanup(srv.Close)
	// As serve --http runs it: behind the Guard, on NewHTTPServer, with the
	// default bounds on each client (and the hub's default notification limit).
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = frontdoor.NewHTTPServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{}), frontdoor.HTTPServerOptions{})
	ts.Start()
	t.Cleanup(ts.Close)
	clients := make([]*sdkClient, sessions)
	for i := range clients {
		clients[i] = sdkOverHTTP(t, ts.URL)
	}
	// Warm up, so that the baseline includes the connections' steady state.
	for _, c := range clients {
		c.call(t, "soak_echo", map[string]any{"text": "warm"})
		c.call(t, "steady_echo", map[string]any{"text": "warm"})
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore := rssMiB()
	goroutines := runtime.NumGoroutine()

	var next, answered, failed atomic.Int64
	kinds := sync.Map{}
	lat := make([]time.Duration, calls)
	var wg sync.WaitGroup
	for w := range conc {
		c := clients[w%sessions]
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= calls {
					return
				}
				tool, args := "soak_echo", map[string]any{"text": strconv.Itoa(i)}
				want := args["text"]
				switch {
				case i%crashEvery == crashEvery-1:
					tool, args = "soak_crash", nil
				case i%100 == 50: // a plan, under the plan bounds: two echoes, then one of both
					tool, args = "run_plan", map[string]any{"steps": []any{
						map[string]any{"id": "a", "tool": "steady_echo", "args": map[string]any{"text": "a" + want.(string)}},
						map[string]any{"id": "b", "tool": "steady_echo", "args": map[string]any{"text": "b" + want.(string)}},
						map[string]any{"id": "c", "tool": "steady_echo", "args": map[string]any{"text": "$<<a.text>>+$<<b.text>>"}},
					}}
					want = "Plan HYBRID_TOOLS:\n- a (steady_echo): succeeded: {\"server\":\"steady\",\"text\":\"a" + want.(string) +
						"\"}\n- b (steady_echo): succeeded: {\"server\":\"steady\",\"text\":\"b" + want.(string) +
						"\"}\n- c (steady_echo): succeeded: {\"server\":\"steady\",\"text\":\"a" + want.(string) + "+b" + want.(string) + "\"}"
				case i%3 == 0:
					tool = "steady_echo"
				}
				start := time.Now()
				res, err := c.session.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
				lat[i] = time.Since(start)
				switch {
				case err != nil:
					t.Errorf("call %d (%s): a protocol error, not an answer: %v", i, tool, err)
				case !res.IsError && resultText(res) == want:
					answered.Add(1)
				case res.IsError && errorKind(res) != "":
					failed.Add(1)
					n, _ := kinds.LoadOrStore(errorKind(res), new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				default:
					t.Errorf("call %d (%s): unclassified answer %q (isError %v)", i, tool, resultText(res), res.IsError)
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	var summary []string
	kinds.Range(func(k, v any) bool {
		summary = append(summary, fmt.Sprintf("%s=%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	if got := answered.Load() + failed.Load(); got != calls {
		t.Fatalf("%d of %d calls answered", got, calls)
	}
	// Idle keep-alive connections may outlast the calls for a while; what
	// must not outlast them is a goroutine per call.
	eventually(t, 30*time.Second, "goroutines back near the baseline", func() bool {
		return runtime.NumGoroutine() <= goroutines+2*conc
	})
	settled := runtime.NumGoroutine()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rssAfter := rssMiB()
	// Everything closed, nothing the soak started may be left.
	for _, c := range clients {
		c.session.Close()
	}
	ts.Close()
	srv.Close()
	h.Close()
	eventually(t, 30*time.Second, "goroutines back to where they were before the proxy started", func() bool {
		return runtime.NumGoroutine() <= idle
	})
	t.Logf("soak: %d calls at concurrency %d over HTTP: %d results, %d error results (%v); p50 %s, p99 %s, max %s; "+
		"goroutines %d -> %d (%d before the proxy started, %d after it closed); heap %.1f -> %.1f MiB; RSS %s -> %s MiB",
		calls, conc, answered.Load(), failed.Load(), summary, lat[calls/2], lat[calls*99/100], lat[calls-1],
		goroutines, settled, idle, runtime.NumGoroutine(), float64(before.HeapAlloc)/(1<<20), float64(after.HeapAlloc)/(1<<20),
		fmtMiB(rssBefore), fmtMiB(rssAfter))
	if growth := int64(after.HeapAlloc) - int64(before.HeapAlloc); growth > 32<<20 {
		t.Errorf("heap grew by %d MiB over the soak", growth>>20)
	}
	// RSS keeps the pages the runtime grew into under load; far more than
	// that is a leak outside the Go heap (a child's pipe buffers, say).
	if !raceEnabled && rssBefore > 0 && rssAfter-rssBefore > 64 {
		t.Errorf("RSS grew by %.0f MiB over the soak", rssAfter-rssBefore)
	}
	// Only the calls in flight when the child dies fail (FI-01: no retry);
	// calls that arrive while it restarts wait for it.
	if crashes := calls / crashEvery; failed.Load() > int64(crashes*(conc+8)) {
		t.Errorf("%d of %d calls failed; %d crashes at concurrency %d should cost at most about %d",
			failed.Load(), calls, crashes, conc, crashes*(conc+8))
	}
}

// raceEnabled is set by the race detector's build (race_test.go).
var raceEnabled bool

// errorKind is the kind an error result carries in its structured content.
func errorKind(res *sdk.CallToolResult) string {
	m, _ := res.StructuredContent.(map[string]any)
	e, _ := m["error"].(map[string]any)
	k, _ := e["kind"].(string)
	return k
}

// rssMiB is the process's resident set in MiB, or -1 where /proc is absent.
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var kb float64
		if _, err := fmt.Sscanf(sc.Text(), "VmRSS: %f kB", &kb); err == nil {
			return kb / 1024
		}
	}
	return -1
}

func fmtMiB(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
