package fuse

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	dir      = "google_maps_directions"
	search   = "google_maps_search_places"
	details  = "google_maps_get_place_details"
	weather  = "weather_get_forecast"
	readFile = "fs_read_file"
	admin    = "internal_reindex" // in the catalog, not user facing
)

var catalog = []string{dir, search, details, weather, readFile, admin}

func known(name string) bool { return slices.Contains(catalog, name) }

func userFacing(name string) bool { return name != admin }

// policy returns DefaultPolicy changed by mod.
func policy(mod func(*Policy)) Policy {
	p := DefaultPolicy()
	if mod != nil {
		mod(&p)
	}
	return p
}

func TestFuse(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		in     Input
		want   Result
	}{
		{
			name:   "a simple route keeps the one needed tool and drops the candidates past its cardinality",
			policy: DefaultPolicy(),
			in: Input{Route: RouteSimple, Needs: []string{dir},
				Candidates: []Candidate{{dir, 0.9}, {search, 0.6}, {details, 0.5}}},
			want: Result{Tools: []string{dir}},
		},
		{
			name: "a complex route keeps both needs and adds the best allowed candidate, dropping one the allowlist lacks",
			policy: policy(func(p *Policy) {
				p.MaxTools = 3
				p.AllowedCapabilities = []string{search, dir, details}
			}),
			in: Input{Route: RouteComplex, Needs: []string{search, dir},
				Candidates: []Candidate{{search, 0.91}, {dir, 0.88}, {details, 0.62}, {weather, 0.7}}},
			want: Result{Tools: []string{search, dir, details}},
		},
		{
			name:   "without needs the top candidates are adopted, after the user-facing and minimum-score filters",
			policy: DefaultPolicy(),
			in: Input{Route: RouteComplex, UserFacing: userFacing,
				Candidates: []Candidate{{weather, 0.8}, {readFile, 0.2}, {details, 0.5}, {admin, 0.9}}},
			want: Result{Tools: []string{weather, details}},
		},
		{
			name:   "empty needs without adopt returns no tools",
			policy: policy(func(p *Policy) { p.AdoptQRWhenNeedsEmpty = false }),
			in:     Input{Candidates: []Candidate{{weather, 0.8}, {details, 0.5}}},
			want:   Result{Tools: []string{}},
		},
		{
			name:   "empty needs without adopt on a complex route fills to the minimum",
			policy: policy(func(p *Policy) { p.AdoptQRWhenNeedsEmpty = false }),
			in: Input{Route: RouteComplex,
				Candidates: []Candidate{{weather, 0.8}, {details, 0.5}, {readFile, 0.4}}},
			want: Result{Tools: []string{weather, details}},
		},
		{
			name:   "low-scored candidates are dropped, the threshold itself kept",
			policy: DefaultPolicy(),
			in:     Input{Needs: []string{dir}, Candidates: []Candidate{{search, 0.34}, {details, 0.35}}},
			want:   Result{Tools: []string{dir, details}},
		},
		{
			name:   "duplicates collapse to the first occurrence",
			policy: DefaultPolicy(),
			in:     Input{Needs: []string{dir, dir}, Candidates: []Candidate{{dir, 0.9}, {search, 0.8}}},
			want:   Result{Tools: []string{dir, search}},
		},
		{
			name:   "duplicates stay when collapse is off",
			policy: policy(func(p *Policy) { p.CollapseDuplicates = false }),
			in:     Input{Needs: []string{dir, dir}, Candidates: []Candidate{{dir, 0.9}, {search, 0.8}}},
			want:   Result{Tools: []string{dir, dir, dir, search}},
		},
		{
			name:   "needs_first puts needs before candidates by score",
			policy: policy(func(p *Policy) { p.PreferExactNeeds = false }),
			in:     Input{Needs: []string{weather}, Candidates: []Candidate{{details, 0.5}, {search, 0.9}}},
			want:   Result{Tools: []string{weather, search, details}},
		},
		{
			name:   "qr_first puts candidates by score before needs",
			policy: policy(func(p *Policy) { p.Order, p.PreferExactNeeds = QRFirst, false }),
			in:     Input{Needs: []string{weather}, Candidates: []Candidate{{details, 0.5}, {search, 0.9}}},
			want:   Result{Tools: []string{search, details, weather}},
		},
		{
			name:   "merge_by_score ranks needs as +Inf in stated order",
			policy: policy(func(p *Policy) { p.Order, p.PreferExactNeeds = MergeByScore, false }),
			in: Input{Needs: []string{weather, readFile},
				Candidates: []Candidate{{details, 0.5}, {search, 0.9}}},
			want: Result{Tools: []string{weather, readFile, search, details}},
		},
		{
			name:   "merge_by_score collapses even with collapse off",
			policy: policy(func(p *Policy) { p.Order, p.CollapseDuplicates = MergeByScore, false }),
			in:     Input{Needs: []string{dir}, Candidates: []Candidate{{search, 0.9}, {dir, 0.8}}},
			want:   Result{Tools: []string{dir, search}},
		},
		{
			name:   "prefer_exact_needs restores the stated order after qr_first",
			policy: policy(func(p *Policy) { p.Order = QRFirst }),
			in: Input{Needs: []string{dir, search},
				Candidates: []Candidate{{search, 0.9}, {dir, 0.8}, {details, 0.7}}},
			want: Result{Tools: []string{dir, search, details}},
		},
		{
			name:   "without prefer_exact_needs qr_first order stands",
			policy: policy(func(p *Policy) { p.Order, p.PreferExactNeeds = QRFirst, false }),
			in: Input{Needs: []string{dir, search},
				Candidates: []Candidate{{search, 0.9}, {dir, 0.8}, {details, 0.7}}},
			want: Result{Tools: []string{search, dir, details}},
		},
		{
			name:   "allowlist drops needs and candidates outside it",
			policy: policy(func(p *Policy) { p.AllowedCapabilities = []string{dir, " " + details} }),
			in: Input{Needs: []string{dir, weather},
				Candidates: []Candidate{{details, 0.6}, {search, 0.9}}},
			want: Result{Tools: []string{dir, details}},
		},
		{
			name:   "an empty allowlist allows everything",
			policy: policy(func(p *Policy) { p.AllowedCapabilities = []string{} }),
			in:     Input{Needs: []string{dir}, Candidates: []Candidate{{search, 0.9}}},
			want:   Result{Tools: []string{dir, search}},
		},
		{
			name:   "user-facing filter drops needs and candidates",
			policy: DefaultPolicy(),
			in: Input{Needs: []string{admin, dir}, UserFacing: userFacing,
				Candidates: []Candidate{{admin, 0.9}, {details, 0.6}}},
			want: Result{Tools: []string{dir, details}},
		},
		{
			name:   "user-facing filter is ignored when not required",
			policy: policy(func(p *Policy) { p.RequireUserFacing = false }),
			in: Input{Needs: []string{admin, dir}, UserFacing: userFacing,
				Candidates: []Candidate{{admin, 0.9}, {details, 0.6}}},
			want: Result{Tools: []string{admin, dir, details}},
		},
		{
			name:   "max_tools caps the belt",
			policy: policy(func(p *Policy) { p.MaxTools = 2 }),
			in:     Input{Needs: []string{dir}, Candidates: []Candidate{{search, 0.9}, {details, 0.8}}},
			want:   Result{Tools: []string{dir, search}},
		},
		{
			name:   "simple route caps at simple_max_primary",
			policy: policy(func(p *Policy) { p.SimpleMaxPrimary = 2 }),
			in: Input{Route: RouteSimple, Needs: []string{dir},
				Candidates: []Candidate{{search, 0.9}, {details, 0.8}}},
			want: Result{Tools: []string{dir, search}},
		},
		{
			name:   "complex route fills from below-threshold candidates best first",
			policy: policy(func(p *Policy) { p.ComplexMinPrimary = 3 }),
			in: Input{Route: RouteComplex, Needs: []string{dir},
				Candidates: []Candidate{{search, 0.2}, {details, 0.3}, {weather, 0.1}}},
			want: Result{Tools: []string{dir, details, search}},
		},
		{
			name:   "complex fill is bounded by max_tools",
			policy: policy(func(p *Policy) { p.MaxTools, p.ComplexMinPrimary = 2, 3 }),
			in: Input{Route: RouteComplex, Needs: []string{dir},
				Candidates: []Candidate{{details, 0.3}, {search, 0.2}}},
			want: Result{Tools: []string{dir, details}},
		},
		{
			name:   "complex fill never brings back filtered tools",
			policy: policy(func(p *Policy) { p.AllowedCapabilities = []string{dir} }),
			in: Input{Route: RouteComplex, Needs: []string{dir},
				Candidates: []Candidate{{search, 0.3}}},
			want: Result{Tools: []string{dir}},
		},
		{
			name:   "complex fill counts a need's own low entry as present",
			policy: DefaultPolicy(),
			in: Input{Route: RouteComplex, Needs: []string{dir},
				Candidates: []Candidate{{dir, 0.2}, {details, 0.1}}},
			want: Result{Tools: []string{dir, details}},
		},
		{
			name:   "unspecified route is complex without the fill",
			policy: DefaultPolicy(),
			in:     Input{Needs: []string{dir}, Candidates: []Candidate{{details, 0.3}}},
			want:   Result{Tools: []string{dir}},
		},
		{
			name:   "general chat returns no tools but still reports unknown needs",
			policy: DefaultPolicy(),
			in: Input{Route: RouteGeneralChat, Needs: []string{dir, "maps_teleport"}, Known: known,
				Candidates: []Candidate{{search, 0.9}}},
			want: Result{Tools: []string{}, Unknown: []string{"maps_teleport"}},
		},
		{
			name:   "exit returns no tools",
			policy: DefaultPolicy(),
			in:     Input{Route: RouteExit, Needs: []string{dir}},
			want:   Result{Tools: []string{}},
		},
		{
			name:   "unknown needs are reported once and not used",
			policy: DefaultPolicy(),
			in:     Input{Needs: []string{"maps_teleport", dir, "maps_teleport"}, Known: known},
			want:   Result{Tools: []string{dir}, Unknown: []string{"maps_teleport"}},
		},
		{
			name:   "needs that are all unknown count as no needs",
			policy: policy(func(p *Policy) { p.AdoptQRWhenNeedsEmpty = false }),
			in: Input{Needs: []string{"maps_teleport"}, Known: known,
				Candidates: []Candidate{{weather, 0.8}}},
			want: Result{Tools: []string{}, Unknown: []string{"maps_teleport"}},
		},
		{
			name:   "candidates unknown to the catalog are dropped",
			policy: DefaultPolicy(),
			in: Input{Route: RouteComplex, Needs: []string{dir}, Known: known,
				Candidates: []Candidate{{"maps_teleport", 0.9}, {search, 0.8}}},
			want: Result{Tools: []string{dir, search}},
		},
		{
			name:   "best per tool keeps the highest score",
			policy: DefaultPolicy(),
			in:     Input{Candidates: []Candidate{{search, 0.2}, {weather, 0.5}, {search, 0.9}}},
			want:   Result{Tools: []string{search, weather}},
		},
		{
			name:   "equal scores keep input order",
			policy: DefaultPolicy(),
			in:     Input{Candidates: []Candidate{{weather, 0.5}, {details, 0.5}, {search, 0.5}}},
			want:   Result{Tools: []string{weather, details, search}},
		},
		{
			name:   "blank names are skipped and NaN scores fall below the threshold",
			policy: DefaultPolicy(),
			in: Input{Needs: []string{" ", " " + dir + " "},
				Candidates: []Candidate{{"", 0.9}, {search, math.NaN()}}},
			want: Result{Tools: []string{dir}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Fuse(tt.policy, tt.in)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Fuse() mismatch (-want +got):\n%s", diff)
			}
			if got.Tools == nil {
				t.Error("Fuse().Tools = nil, want non-nil")
			}
		})
	}
}

func TestFuseDoesNotModifyInput(t *testing.T) {
	in := Input{Needs: []string{search, dir}, Candidates: []Candidate{{details, 0.4}, {dir, 0.9}}}
	p := policy(func(p *Policy) { p.Order = QRFirst })
	Fuse(p, in)
	want := Input{Needs: []string{search, dir}, Candidates: []Candidate{{details, 0.4}, {dir, 0.9}}}
	if diff := cmp.Diff(want.Needs, in.Needs); diff != "" {
		t.Errorf("Needs changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Candidates, in.Candidates); diff != "" {
		t.Errorf("Candidates changed (-want +got):\n%s", diff)
	}
}

// FuzzFuse checks the invariants every policy must keep.
func FuzzFuse(f *testing.F) {
	f.Add("SIMPLE_TOOL", "a,b", "b,c,d", []byte{200, 90, 10}, uint8(3), false)
	f.Add("COMPLEX_TOOL", "", "a,a,b", []byte{1, 255}, uint8(1), true)
	f.Add("EXIT", "x", "x", []byte{}, uint8(12), false)
	f.Fuzz(func(t *testing.T, route, needs, cands string, scores []byte, maxTools uint8, qrFirst bool) {
		p := policy(func(p *Policy) {
			p.MaxTools = max(1, int(maxTools))
			p.ComplexMinPrimary = 3
			if qrFirst {
				p.Order = QRFirst
			}
		})
		in := Input{Route: Route(route), Needs: strings.Split(needs, ","),
			Known: func(s string) bool { return s != "x" }}
		for i, name := range strings.Split(cands, ",") {
			in.Candidates = append(in.Candidates, Candidate{name, float64(byteAt(scores, i)) / 255})
		}
		checkInvariants(t, p, in, Fuse(p, in))
	})
}

func byteAt(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 128
}

func checkInvariants(t *testing.T, p Policy, in Input, got Result) {
	t.Helper()
	limit := p.MaxTools
	switch in.Route {
	case RouteSimple:
		limit = min(limit, p.SimpleMaxPrimary)
	case RouteGeneralChat, RouteExit:
		limit = 0
	}
	if got.Tools == nil || len(got.Tools) > limit {
		t.Errorf("got %d tools %q, want at most %d", len(got.Tools), got.Tools, limit)
	}
	offered := map[string]bool{}
	for _, n := range in.Needs {
		offered[strings.TrimSpace(n)] = true
	}
	for _, c := range in.Candidates {
		offered[strings.TrimSpace(c.Tool)] = in.Known(strings.TrimSpace(c.Tool))
	}
	seen := map[string]bool{}
	for _, tool := range got.Tools {
		if seen[tool] || tool == "" || !offered[tool] || slices.Contains(got.Unknown, tool) {
			t.Errorf("tool %q is repeated, blank, unknown or never offered in %q", tool, got.Tools)
		}
		seen[tool] = true
	}
}

func BenchmarkFuse(b *testing.B) {
	in := Input{Route: RouteComplex, Needs: []string{"t3", "t17", "t29", "missing"},
		Known: func(s string) bool { return s != "missing" }, UserFacing: func(string) bool { return true }}
	for i := range 40 {
		in.Candidates = append(in.Candidates, Candidate{Tool: "t" + strconv.Itoa(i), Score: float64(i%17) / 17})
	}
	p := DefaultPolicy()
	for b.Loop() {
		Fuse(p, in)
	}
}
