package upstream

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
)

// decodeResult decodes every result as mcp-go's client does, whichever
// way it takes: the one-pass decoding of text results, and mcp-go's for
// the rest (and its errors).
func TestDecodeResultAsMCPGo(t *testing.T) {
	for name, raw := range map[string]string{
		"text":                `{"content":[{"type":"text","text":"5"}]}`,
		"texts and an error":  `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b \u00e9"}],"isError":true}`,
		"structured":          `{"content":[{"type":"text","text":"5"}],"structuredContent":{"result":5,"big":12345678901234567890}}`,
		"empty content":       `{"content":[]}`,
		"null structured":     `{"content":[],"structuredContent":null}`,
		"image":               `{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`,
		"annotated text":      `{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}`,
		"meta":                `{"_meta":{"k":"v"},"content":[{"type":"text","text":"x"}]}`,
		"unknown member":      `{"content":[{"type":"text","text":"x"}],"extra":1}`,
		"text with meta":      `{"content":[{"type":"text","text":"x","_meta":{"k":"v"}}]}`,
		"unknown item member": `{"content":[{"type":"text","text":"x","extra":1}]}`,
		"result type":         `{"content":[],"resultType":"complete"}`,
		"request state":       `{"content":[],"requestState":"s"}`,
		"input requests":      `{"content":[],"resultType":"input_required","inputRequests":{}}`,
		"members in a case":   `{"Content":[{"Type":"text","TEXT":"x"}],"IsError":true,"StructuredContent":{"a":1}}`,
		"key in another case": `{"content":[{"type":"text","Text":"x","text":"y"}]}`,
		"text not a string":   `{"content":[{"type":"text","text":5}]}`,
		"no text":             `{"content":[{"type":"text"}]}`,
		"no content":          `{"isError":true}`,
		"not an object":       `[1]`,
	} {
		t.Run(name, func(t *testing.T) {
			msg := json.RawMessage(raw)
			want, wantErr := mcp.ParseCallToolResult(&msg)
			got, err := decodeResult(msg)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error: got %v, want %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result differs from mcp-go's (-mcp-go +got):\n%s", diff)
			}
		})
	}
}
