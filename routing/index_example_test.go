package routing_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-router/mcp-router/routing"
)

func ExampleIndex() {
	ix := routing.NewIndex(routing.IndexOptions{})
	ix.SetUpstream("fs", []routing.Tool{
		{Name: "fs_read_file", Description: "Read the contents of a file.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File path"}}}`)},
		{Name: "fs_listDirectory", Description: "List the entries of a folder."},
	})
	ix.SetUpstream("mail", []routing.Tool{
		{Name: "mail_send", Description: "Send an email message to a recipient."},
	})

	for _, h := range ix.Search("show me what is in the directory, then email it to Ann", 3) {
		fmt.Printf("%-16s keep=%v\n", h.Name, h.Score >= 0.35)
	}

	ix.SetUpstream("mail", nil) // the mail server went away
	fmt.Println(ix.Len(), "tools left")
	// Output:
	// fs_listDirectory keep=true
	// mail_send        keep=true
	// 2 tools left
}
