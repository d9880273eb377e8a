package proxy

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// instanceOffers are n instances of one server of 14 tools, each naming
// another of its tools in its description, as the filesystem server does.
func instanceOffers(n int) []offer {
	var tools []mcp.Tool
	for i := range 14 {
		tools = append(tools, mcp.Tool{Name: fmt.Sprintf("tool_%02d", i),
			Description:    fmt.Sprintf("Do thing %d to a file. Prefer tool_%02d for text.", i, (i+1)%14),
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Path of the file"}},"required":["path"]}`)})
	}
	offers := make([]offer, n)
	for i := range offers {
		name := fmt.Sprintf("fs%02d", i)
		offers[i] = offer{cfg: UpstreamConfig{Name: name, Prefix: name + "_"}, Listing: upstream.Listing{Tools: tools, Raw: tools}}
	}
	return offers
}

// BenchmarkBuildCatalogInstances rebuilds the catalog of ten instances
// (140 tools): naming, contracts and the shadowing check.
func BenchmarkBuildCatalogInstances(b *testing.B) {
	offers := instanceOffers(10)
	reserved := ReservedNames()
	for b.Loop() {
		if c := buildCatalog(nil, offers, reserved); len(c.Warnings) != 0 {
			b.Fatalf("warnings: %v", c.Warnings)
		}
	}
}
