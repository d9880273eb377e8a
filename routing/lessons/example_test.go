package lessons_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
	"github.com/mcp-router/mcp-router/state"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "lessons-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := state.Open(ctx, state.Options{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	mem, err := lessons.NewMemory(ctx, db.Lessons(), lessons.MemoryOptions{})
	if err != nil {
		log.Fatal(err)
	}

	// The user corrected a routing: system logs are not Home Assistant's.
	mem.Learn(ctx, lessons.Lesson{Query: "query the system logs", Tool: "ha_get_logs", Polarity: lessons.Avoid, Source: lessons.SourceFeedback})
	mem.Learn(ctx, lessons.Lesson{Query: "query the system logs", Tool: "journal_query", Polarity: lessons.Use, Source: lessons.SourceFeedback})

	ranked := []routing.Hit{{Name: "ha_get_logs", Score: 0.82}, {Name: "journal_query", Score: 0.41}, {Name: "fs_read_file", Score: 0.3}}
	for _, q := range []string{"Query the system logs, please", "show the Home Assistant logbook"} {
		fmt.Println(q)
		for _, h := range mem.Rerank(ctx, "", q, ranked) {
			fmt.Printf("  %-14s %.2f\n", h.Name, h.Score)
		}
	}
	if err := mem.Flush(ctx); err != nil { // persist the uses before closing
		log.Fatal(err)
	}
	// Output:
	// Query the system logs, please
	//   journal_query  0.63
	//   fs_read_file   0.30
	// show the Home Assistant logbook
	//   ha_get_logs    0.82
	//   journal_query  0.41
	//   fs_read_file   0.30
}
