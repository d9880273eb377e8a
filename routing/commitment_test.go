package routing

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
)

// commitChatTools are a chat server's room tools: many tools that share
// one word, as real servers' tools do.
func commitChatTools() []Tool {
	return []Tool{
		{Name: "create_room", Description: "Create a chat room with a name and an optional topic."},
		{Name: "delete_room", Description: "Delete a chat room and its history."},
		{Name: "rename_room", Description: "Rename a chat room."},
		{Name: "archive_room", Description: "Archive a chat room so that it becomes read-only."},
		{Name: "list_rooms", Description: "List the chat rooms the user belongs to."},
		{Name: "get_room_details", Description: "Get a chat room's details: topic, members and settings."},
		{Name: "add_room_member", Description: "Add a user to a chat room."},
		{Name: "remove_room_member", Description: "Remove a user from a chat room."},
		{Name: "set_room_topic", Description: "Set the topic of a chat room."},
		{Name: "get_room_messages", Description: "Get the recent messages posted in a chat room."},
		{Name: "send_room_message", Description: "Post a message to a chat room."},
		{Name: "pin_room_message", Description: "Pin a message in a chat room."},
	}
}

// commitKitchenTools are a recipe server's tools.
func commitKitchenTools() []Tool {
	return []Tool{
		{Name: "find_recipes", Description: "Find recipes by ingredient, cuisine or diet (vegetarian, vegan, gluten-free) and meal: breakfast, lunch or dinner."},
		{Name: "get_recipe", Description: "Get a recipe's ingredients, steps and cooking time."},
		{Name: "plan_meals", Description: "Plan the week's meals and make a shopping list of the ingredients."},
	}
}

// commitDevTools are a developer workstation server's tools: cleaning and
// finding things, many tools sharing each word.
func commitDevTools() []Tool {
	return []Tool{
		{Name: "clean_cache", Description: "Clean the package manager's download cache."},
		{Name: "clean_build", Description: "Clean the build output directory of a project."},
		{Name: "clean_docker_images", Description: "Clean up dangling Docker images and stopped containers."},
		{Name: "clean_logs", Description: "Clean log files older than a given number of days."},
		{Name: "clean_temp_files", Description: "Clean the temporary files directory."},
		{Name: "prune_branches", Description: "Clean up git branches that were merged."},
		{Name: "find_files", Description: "Find files by name pattern under a directory."},
		{Name: "find_text", Description: "Find text in files, like grep."},
		{Name: "find_process", Description: "Find running processes by name."},
		{Name: "find_large_files", Description: "Find the largest files on a disk."},
		{Name: "find_port", Description: "Find which process listens on a network port."},
		{Name: "disk_usage", Description: "Show disk usage by directory."},
		{Name: "kill_process", Description: "Stop a running process by its id."},
		{Name: "list_services", Description: "List system services and whether they run."},
		{Name: "restart_service", Description: "Restart a system service."},
		{Name: "tail_log", Description: "Show the last lines of a log file."},
	}
}

// commitDBTools are a database administration server's tools, finding
// and cleaning too.
func commitDBTools() []Tool {
	return []Tool{
		{Name: "find_slow_queries", Description: "Find the slowest queries of the last hour."},
		{Name: "find_unused_indexes", Description: "Find indexes that no query uses."},
		{Name: "find_locks", Description: "Find sessions holding or waiting for locks."},
		{Name: "find_table", Description: "Find tables by name in every schema."},
		{Name: "find_duplicates", Description: "Find duplicate rows in a table by a set of columns."},
		{Name: "clean_stale_sessions", Description: "Clean up idle database sessions."},
		{Name: "clean_expired_tokens", Description: "Clean expired access tokens from the token table."},
		{Name: "vacuum_table", Description: "Clean up dead rows of a table and reclaim space."},
		{Name: "clean_audit_log", Description: "Clean audit log entries older than the retention period."},
		{Name: "run_query", Description: "Run a read-only SQL query."},
		{Name: "backup_database", Description: "Back up a database to object storage."},
		{Name: "restore_database", Description: "Restore a database from a backup."},
	}
}

// commitRouter is a router over the chat, kitchen, developer and
// database tools: enough tools sharing common words for a ranking to be
// flat (see commitDepth).
func commitRouter(opts RouterOptions) *Router {
	r := NewRouter(opts)
	r.SetUpstream("chat", commitChatTools())
	r.SetUpstream("kitchen", commitKitchenTools())
	r.SetUpstream("dev", commitDevTools())
	r.SetUpstream("db", commitDBTools())
	return r
}

// TestRouteAbstainsWhenNoToolStandsOut: a request that no tool serves,
// matched by a word or two in many tools alike, is abstained on though
// its top tool covers more of it than AbstainCoverage, and the no_match
// alert names the closest tools as such and says why.
func TestRouteAbstainsWhenNoToolStandsOut(t *testing.T) {
	const query = "Can you help me find the best way to clean my oven?"
	off := commitRouter(RouterOptions{AbstainCommitment: -1}).Route(context.Background(), Request{Query: query})
	if off.Abstained || len(off.Ranked) == 0 || off.Ranked[0].Coverage < DefaultAbstainCoverage {
		t.Fatalf("without the commitment check: abstained %v, ranked %v; want the ranking's tools, the top covering at least %.2f",
			off.Abstained, hitsOf(off.Ranked), DefaultAbstainCoverage)
	}
	d := commitRouter(RouterOptions{}).Route(context.Background(), Request{Query: query})
	if !d.Abstained || len(d.Selected) != 0 {
		t.Fatalf("abstained %v, selected %v; want an abstention", d.Abstained, names(d.Selected))
	}
	a := alertOf(d, "no_match")
	if a == nil {
		t.Fatalf("alerts %v, want no_match", d.Alerts)
	}
	if len(a.Tools) == 0 || !strings.Contains(a.Message, "closest: "+a.Tools[0]) || !strings.Contains(a.Message, "none stands out") {
		t.Errorf("no_match alert %+v: want the closest tools named as such and the reason", *a)
	}
}

// TestRouteCommittedRequestsInPeoplesWords: requests a tool serves, in a
// user's own words, over the same catalog, are not abstained on and get
// that tool.
func TestRouteCommittedRequestsInPeoplesWords(t *testing.T) {
	wantRouted(t, commitRouter(RouterOptions{}), []routedCase{
		{"my disk is full, clear out the old build output", "clean_build"},
		{"which program is hogging port 8080", "find_port"},
		{"get rid of the docker junk", "clean_docker_images"},
		{"I want something vegetarian to cook for dinner tonight", "find_recipes"},
		{"post in the standup room that I'm running late", "send_room_message"},
		{"which queries are making the database slow", "find_slow_queries"},
		{"get rid of the old audit entries", "clean_audit_log"},
	})
}

// TestCommitment: the NQC of the top commitDepth raw scores, in any
// order, tools past the end of the ranking counted at zero: one tool of
// k alone scores √(k-1), two alike √(k/2-1).
func TestCommitment(t *testing.T) {
	raws := func(xs ...float64) []Candidate {
		out := make([]Candidate, len(xs))
		for i, x := range xs {
			out[i].raw = x
		}
		return out
	}
	alike := func(n int, x float64) []Candidate {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = x
		}
		return raws(xs...)
	}
	k := float64(commitDepth)
	for _, tc := range []struct {
		name   string
		ranked []Candidate
		want   float64
	}{
		{"nothing ranked", nil, 0},
		{"one tool alone", raws(5), math.Sqrt(k - 1)},
		{"two alike", raws(1, 1), math.Sqrt(k/2 - 1)},
		{"two alike, unordered", raws(0, 1, 0, 1), math.Sqrt(k/2 - 1)},
		{"a full ranking alike", alike(commitDepth, 2), 0},
		{"only the top count", append(alike(commitDepth, 1), raws(0.5, 0.5)...), 0},
	} {
		if got := commitment(tc.ranked); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: commitment %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUncommittedCoverage: a top tool covering commitCoverage of the
// request or more is never refused for a flat ranking, and a committed
// ranking never for a modest coverage.
func TestUncommittedCoverage(t *testing.T) {
	flat := make([]Candidate, 20)
	for i := range flat {
		flat[i].raw = 1
	}
	alone := []Candidate{{raw: 3}}
	for _, tc := range []struct {
		name     string
		ranked   []Candidate
		coverage float64
		want     bool
	}{
		{"flat, little covered", flat, 0.2, true},
		{"flat, much covered", flat, commitCoverage, false},
		{"committed, little covered", alone, 0.2, false},
	} {
		if got := uncommitted(tc.ranked, tc.coverage, DefaultAbstainCommitment); got != tc.want {
			t.Errorf("%s: uncommitted %v, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkCommitment measures the commitment of a full candidate pool,
// the check's per-request cost.
func BenchmarkCommitment(b *testing.B) {
	ranked := make([]Candidate, candidatePool)
	for i := range ranked {
		ranked[i].raw = float64((i*37)%candidatePool) / 7
	}
	for b.Loop() {
		commitment(ranked)
	}
}

// routedCase is a request and the tool it must be routed to.
type routedCase struct{ query, want string }

// wantRouted routes each case's request through r and fails t when it is
// abstained on or its tool is not selected.
func wantRouted(t *testing.T, r *Router, cases []routedCase) {
	t.Helper()
	for _, tc := range cases {
		d := r.Route(context.Background(), Request{Query: tc.query})
		if d.Abstained || !slices.Contains(names(d.Selected), tc.want) {
			t.Errorf("%q: abstained %v, selected %v; want %s selected", tc.query, d.Abstained, names(d.Selected), tc.want)
		}
	}
}
