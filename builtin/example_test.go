package builtin_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/builtin"
)

// A built-in server is an ordinary mcp-go server: here an in-process client calls the calculator.
// A domain error such as dividing by zero is a tool result with isError set, which the model reads.
func ExampleNew() {
	srv, err := builtin.New("calculator", nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		log.Fatal(err)
	}

	for _, b := range []float64{2, 0} {
		req := mcp.CallToolRequest{}
		req.Params.Name = "divide"
		req.Params.Arguments = map[string]any{"a": 7, "b": b}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("isError=%v text=%q structured=%v\n", res.IsError, mcp.GetTextFromContent(res.Content[0]), res.StructuredContent)
	}
	// Output:
	// isError=false text="3.5" structured=map[result:3.5]
	// isError=true text="divide: cannot divide by zero" structured=<nil>
}

func ExampleNames() {
	fmt.Println(builtin.Names())
	// Output: [calculator docs web]
}
