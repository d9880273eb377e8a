package proxy

import (
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/eval"
	"github.com/mcp-router/mcp-router/state"
)

// etomCatalog loads the tools and server descriptions of the shared
// benchmark's etom set (491 real MCP servers), skipping tb when the set is
// not beside the module root.
func etomCatalog(tb testing.TB) (tools []routing.Tool, servers map[string]string) {
	tb.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "shared", "bench", "routing", "etom"))
	if err != nil {
		tb.Fatal(err)
	}
	tf, err := os.Open(filepath.Join(dir, "tools.jsonl"))
	if err != nil {
		tb.Skipf("etom absent: %v", err)
	}
	defer tf.Close()
	if tools, err = eval.LoadTools(tf); err != nil {
		tb.Fatalf("etom tools: %v", err)
	}
	sf, err := os.Open(filepath.Join(dir, "servers.jsonl"))
	if err != nil {
		tb.Fatalf("etom servers: %v", err)
	}
	defer sf.Close()
	if servers, err = loadServers(sf); err != nil {
		tb.Fatalf("etom servers: %v", err)
	}
	return tools, servers
}

// startCatalog is the upstreams of a catalog served by in-process MCP
// servers: etom's servers, copies times, the copies after the first under
// a prefix of their own (c2_, c3_...) so that no name collides.
func startCatalog(tools []routing.Tool, servers map[string]string, copies int) ([]UpstreamConfig, map[string]*server.MCPServer) {
	byServer := map[string][]routing.Tool{}
	var order []string
	for _, tl := range tools {
		if len(tl.Name)+len("c9_") > maxNameLen {
			continue // no client takes the name (27 of etom's tools)
		}
		if _, ok := byServer[tl.Upstream]; !ok {
			order = append(order, tl.Upstream)
		}
		byServer[tl.Upstream] = append(byServer[tl.Upstream], tl)
	}
	builtins := map[string]*server.MCPServer{}
	var ups []UpstreamConfig
	for c := range copies {
		for _, srv := range order {
			name := strings.Trim(unsafeName.ReplaceAllString(srv, "_"), "_")
			prefix := ""
			if c > 0 {
				name, prefix = fmt.Sprintf("%s_c%d", name, c+1), fmt.Sprintf("c%d_", c+1)
			}
			for base, i := name, 2; builtins[name] != nil; i++ {
				name = fmt.Sprintf("%s_%d", base, i)
			}
			builtins[name] = catalogServer(name, byServer[srv])
			ups = append(ups, UpstreamConfig{Name: name, Prefix: prefix, Transport: TransportBuiltin, Builtin: name,
				Domain: srv, Description: servers[srv]})
		}
	}
	return ups, builtins
}

// BenchmarkStartCatalog starts a gateway over etom's 491 servers (2,348
// tools, those whose names a client takes), and over copies of them
// (4,696 and 18,784 tools), as serve
// does: tool pins in a real SQLite state, the poisoning scan on (warn), a
// server whose router indexes the catalog. Each iteration is a first
// start (pins/new: every tool pinned on first sight) or a restart
// (pins/kept: the pins are there). It reports the time until the
// catalog is searchable (every tool in the router's index), the CPU time
// the process spent meanwhile (s-cpu, the upstreams' part included, as
// the kernel counts it: steadier than the time on a busy machine), the heap the gateway holds then over what the in-process upstreams hold (after a
// GC), what it allocated on the way, and how many catalogs a client
// would have seen (rebuilds: each costs the whole catalog, and how many
// a start makes depends on timing).
//
//	go test -run '^$' -bench BenchmarkStartCatalog -benchtime 3x ./proxy/
func BenchmarkStartCatalog(b *testing.B) {
	tools, servers := etomCatalog(b)
	for _, copies := range []int{1, 2, 8} {
		for _, kept := range []bool{false, true} {
			ups, builtins := startCatalog(tools, servers, copies)
			total := countTools(builtins, ups)
			name := fmt.Sprintf("tools=%d/pins=%s", total, map[bool]string{false: "new", true: "kept"}[kept])
			b.Run(name, func(b *testing.B) {
				dir := ""
				if kept {
					dir = b.TempDir()
					startGateway(b, ups, builtins, dir) // pins every tool
				}
				var took time.Duration
				var heap, alloc, cpu float64
				pinTx.Store(0)
				rebuilds.Store(0)
				for b.Loop() {
					d := dir
					if !kept {
						d = b.TempDir()
					}
					c := cpuSeconds()
					t, h, a := startGateway(b, ups, builtins, d)
					cpu += cpuSeconds() - c
					took, heap, alloc = took+t, heap+h, alloc+a
				}
				n := float64(b.N)
				b.ReportMetric(took.Seconds()/n, "s-searchable")
				b.ReportMetric(float64(pinTx.Load())/n, "pin-tx")
				b.ReportMetric(float64(rebuilds.Load())/n, "rebuilds")
				b.ReportMetric(cpu/n, "s-cpu")
				b.ReportMetric(heap/n/(1<<20), "MiB-heap")
				b.ReportMetric(alloc/n/(1<<20), "MiB-alloc")
				b.ReportMetric(heap/n/float64(total)/(1<<10), "KiB-heap/tool")
			})
		}
	}
}

// startGateway starts a hub and a server over ups with its pins in the
// state in dir, and returns how long the catalog took to become
// searchable, the heap held then beyond the heap before, and the bytes
// allocated meanwhile.
func startGateway(b *testing.B, ups []UpstreamConfig, builtins map[string]*server.MCPServer, dir string) (time.Duration, float64, float64) {
	b.Helper()
	b.StopTimer()
	before := heapNow()
	b.StartTimer()
	began := time.Now()
	db, err := state.Open(b.Context(), state.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	pins, err := integrity.OpenStore(countedPins{db.Pins().(integrity.UpstreamPinStore)})
	if err != nil {
		b.Fatal(err)
	}
	h := NewHub(Options{Upstreams: ups, Reserved: ReservedNames(), Pins: pins, Poisoning: integrity.Warn,
		InitTimeout: 2 * time.Minute,
		Builtin:     func(name string, _ []string) (*server.MCPServer, error) { return builtins[name], nil }})
	defer h.Close()
	rt := routing.NewRouter(routing.RouterOptions{})
	srv := NewServer(ServerOptions{Hub: h, Router: rt})
	defer srv.Close()
	h.Follow(func(*Catalog) { rebuilds.Add(1) })
	if err := h.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	h.flush()
	took := time.Since(began)
	b.StopTimer()
	defer b.StartTimer()
	c := h.Catalog()
	for _, t := range c.Tools {
		if _, ok := rt.Tool(t.Name); !ok {
			b.Fatalf("tool %s not searchable", t.Name)
		}
	}
	if want := countTools(builtins, ups); len(c.Tools) != want {
		b.Fatalf("%d tools in the catalog, want %d (problems: %v)", len(c.Tools), want, c.Problems)
	}
	after := heapNow()
	if path := os.Getenv("START_HEAP_PROFILE"); path != "" { // what the gateway holds once searchable
		writeHeapProfile(b, path)
	}
	return took, float64(after.HeapInuse) - float64(before.HeapInuse), float64(after.TotalAlloc - before.TotalAlloc)
}

// rebuilds counts the catalogs, each new to a client, that the gateways
// startGateway starts rebuild (and the first, empty, one each).
var rebuilds atomic.Int64

// pinTx counts the pin transactions of the gateways startGateway starts.
var pinTx atomic.Int64

// countedPins counts its transactions in pinTx.
type countedPins struct{ integrity.UpstreamPinStore }

func (c countedPins) UpdatePins(change func(integrity.Pins) bool) error {
	pinTx.Add(1)
	return c.UpstreamPinStore.UpdatePins(change)
}

func (c countedPins) UpdateUpstreamPins(upstreams []string, change func(integrity.Pins) bool) error {
	pinTx.Add(1)
	return c.UpstreamPinStore.UpdateUpstreamPins(upstreams, change)
}

func countTools(builtins map[string]*server.MCPServer, ups []UpstreamConfig) int {
	n := 0
	for _, u := range ups {
		n += len(builtins[u.Builtin].ListTools())
	}
	return n
}

func heapNow() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

// cpuSeconds is the CPU time the process has spent, user and system, as
// the kernel counts it: on a machine shared with other work it stays
// what the start costs, where the wall time and the Go runtime's own
// estimate (wall time while busy) grow with the load.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkRequestMoreTools measures request_more_tools as a client sees
// it: a real mcp-go client over stdio pipes to a gateway whose router
// indexes about 1,000 of etom's tools (its first servers), served by
// in-process MCP servers, one request at a time, the requests etom's own.
// It reports the median and the 90th percentile of the time from the
// client's send to the result in its hands (µs-p50, µs-p90).
//
//	go test -run '^$' -bench BenchmarkRequestMoreTools ./proxy/
func BenchmarkRequestMoreTools(b *testing.B) {
	tools, servers := etomCatalog(b)
	queries := etomQueries(b)
	ups, builtins := startCatalog(firstServers(tools, 1000), servers, 1)
	h := startHubWith(b, Options{Upstreams: ups, InitTimeout: 2 * time.Minute,
		Builtin: func(name string, _ []string) (*server.MCPServer, error) { return builtins[name], nil }})
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}),
		Session: routing.SessionOptions{MaxDiscoveries: 1 << 30, ResetAfter: time.Hour}})
	b.Cleanup(srv.Close)
	ctx, c := stdioPipeClient(b, srv)
	var took []time.Duration
	i := 0
	for b.Loop() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "request_more_tools"
		req.Params.Arguments = map[string]any{"query": queries[i%len(queries)].Query}
		i++
		began := time.Now()
		res, err := c.CallTool(ctx, req)
		took = append(took, time.Since(began))
		if err != nil || res.IsError {
			b.Fatalf("request_more_tools: %v %+v", err, res)
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "µs-p50")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds()), "µs-p90")
	b.ReportMetric(float64(len(h.Catalog().Tools)), "tools")
}

// firstServers is tools up to the server whose tools make n or more.
func firstServers(tools []routing.Tool, n int) []routing.Tool {
	var out []routing.Tool
	for i, tl := range tools {
		if len(out) >= n && tl.Upstream != tools[i-1].Upstream {
			break
		}
		out = append(out, tl)
	}
	return out
}

// etomQueries loads the requests of the shared benchmark's etom set,
// skipping tb when the set is absent.
func etomQueries(tb testing.TB) []eval.Query {
	tb.Helper()
	f, err := os.Open(filepath.Join("..", "..", "shared", "bench", "routing", "etom", "queries.jsonl"))
	if err != nil {
		tb.Skipf("etom absent: %v", err)
	}
	defer f.Close()
	qs, err := eval.LoadQueries(f)
	if err != nil {
		tb.Fatalf("etom queries: %v", err)
	}
	return qs
}

// BenchmarkVetCatalog decodes and scans for poisoning every tool of
// etom's set once per iteration (2,348 tools), as vetting does on a first
// start, the other servers' names behind a lookup that finds none.
//
//	go test -run '^$' -bench BenchmarkVetCatalog -benchmem ./proxy/
func BenchmarkVetCatalog(b *testing.B) {
	tools, _ := etomCatalog(b)
	defs := make([]mcp.Tool, len(tools))
	for i, tl := range tools {
		defs[i] = mcp.NewToolWithRawSchema(tl.Name, tl.Description, tl.InputSchema)
	}
	none := func(string, bool) bool { return false }
	c := cpuSeconds()
	for b.Loop() {
		for _, t := range defs {
			integrity.ContractOf(t).Scan(t, none)
		}
	}
	b.ReportMetric((cpuSeconds()-c)/float64(b.N)*1e3, "ms-cpu/op")
}

// BenchmarkVetUpstreams vets etom's 491 servers one after another, as a
// first start whose upstreams connect apart does: each upstream's tools
// decoded, checked against their pins in a real SQLite state (all new,
// so pinned) and scanned. It reports the pin transactions it took.
//
//	go test -run '^$' -bench BenchmarkVetUpstreams ./proxy/
func BenchmarkVetUpstreams(b *testing.B) {
	tools, servers := etomCatalog(b)
	ups, builtins := startCatalog(tools, servers, 1)
	listed := make([][]mcp.Tool, len(ups))
	for i, u := range ups {
		for _, name := range slices.Sorted(maps.Keys(builtins[u.Builtin].ListTools())) {
			listed[i] = append(listed[i], builtins[u.Builtin].ListTools()[name].Tool)
		}
	}
	log := slog.New(slog.DiscardHandler)
	pinTx.Store(0)
	c := cpuSeconds()
	for b.Loop() {
		b.StopTimer()
		db, err := state.Open(b.Context(), state.Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		pins, err := integrity.OpenStore(countedPins{db.Pins().(integrity.UpstreamPinStore)})
		if err != nil {
			b.Fatal(err)
		}
		h := NewHub(Options{Upstreams: ups, Pins: pins, Poisoning: integrity.Warn})
		b.StartTimer()
		for i, u := range ups {
			h.vet(u, log, log, listed[i])
		}
		b.StopTimer()
		h.Close()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric((cpuSeconds()-c)/float64(b.N)*1e3, "ms-cpu/op")
	b.ReportMetric(float64(pinTx.Load())/float64(b.N), "pin-tx/op")
}

// BenchmarkCatalogGrowth rebuilds the catalog of etom's servers twice
// over (4,656 tools) as a start does when its upstreams join in ten
// waves: each rebuild of the hub names every tool, signs the catalog and
// syncs a routed server to it. Its allocations are steady where a
// start's are not (how many waves a start has depends on timing). It
// reports the heap the hub, the server and the router then hold (after
// a GC).
//
//	go test -run '^$' -bench BenchmarkCatalogGrowth -benchmem ./proxy/
func BenchmarkCatalogGrowth(b *testing.B) {
	tools, servers := etomCatalog(b)
	ups, builtins := startCatalog(tools, servers, 2)
	listings := map[string]upstream.Listing{}
	for _, u := range ups {
		var l upstream.Listing
		listed := builtins[u.Builtin].ListTools()
		for _, name := range slices.Sorted(maps.Keys(listed)) {
			l.Tools = append(l.Tools, listed[name].Tool)
		}
		l.Raw = l.Tools
		listings[u.Name] = l
	}
	var held float64
	for b.Loop() {
		b.StopTimer()
		before := heapNow().HeapInuse
		b.StartTimer()
		h := NewHub(Options{Upstreams: ups, Reserved: ReservedNames()})
		srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
		list := h.set().list
		for wave := 1; wave <= 10; wave++ {
			for _, u := range list[len(list)*(wave-1)/10 : len(list)*wave/10] {
				u.Seed(listings[u.Name()])
			}
			h.rebuild()
		}
		b.StopTimer()
		held += float64(heapNow().HeapInuse) - float64(before)
		b.StartTimer()
		srv.Close()
		h.Close()
	}
	b.ReportMetric(held/float64(b.N)/(1<<20), "MiB-heap")
}
