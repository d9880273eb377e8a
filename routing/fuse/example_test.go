package fuse_test

import (
	"fmt"

	"github.com/mcp-router/mcp-router/routing/fuse"
)

func ExampleFuse() {
	p := fuse.DefaultPolicy()
	p.MaxTools = 3
	res := fuse.Fuse(p, fuse.Input{
		Route: fuse.RouteComplex,
		Needs: []string{"maps_search_places", "maps_teleport"},
		Candidates: []fuse.Candidate{
			{Tool: "maps_directions", Score: 0.82},
			{Tool: "maps_search_places", Score: 0.78},
			{Tool: "weather_forecast", Score: 0.12},
		},
		Known: func(name string) bool { return name != "maps_teleport" },
	})
	fmt.Println(res.Tools)
	fmt.Println(res.Unknown)
	// Output:
	// [maps_search_places maps_directions]
	// [maps_teleport]
}

func ExampleBreaker() {
	b := fuse.NewBreaker(fuse.BreakerOptions{MaxDiscoveries: 3})
	for range 4 {
		allowed, n := b.Discover()
		fmt.Println(n, allowed, b.Open())
	}
	b.Success() // a real tool call worked
	fmt.Println(b.Open())
	// Output:
	// 1 true false
	// 2 true false
	// 3 true true
	// 4 false true
	// false
}
