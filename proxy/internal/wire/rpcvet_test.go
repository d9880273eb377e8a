package wire

import (
	"errors"
	"strings"
	"testing"
)

// What the proxy takes for a well-formed reply (FI-09, FI-10).
func TestVetReply(t *testing.T) {
	tests := []struct {
		name, reply string
		want        string // "" for a good reply, else in the error
	}{
		{"result", `{"jsonrpc":"2.0","id":7,"result":{}}`, ""},
		{"error", `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"no"}}`, ""},
		{"null error beside a result", `{"jsonrpc":"2.0","id":7,"result":{},"error":null}`, ""},
		{"both", `{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"no"}}`, "both a result and an error"},
		{"neither", `{"jsonrpc":"2.0","id":7}`, "neither"},
		{"other id", `{"jsonrpc":"2.0","id":8,"result":{}}`, "another request"},
		{"string id", `{"jsonrpc":"2.0","id":"7","result":{}}`, "another request"},
		{"not JSON", `{"jsonrpc":"2.0","id":`, "not JSON"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":7,"result":{}} x`, "not JSON"},
		{"batch", `[{"jsonrpc":"2.0","id":7,"result":{}}]`, "batch"},
		{"version 1.0", `{"jsonrpc":"1.0","id":7,"result":{}}`, "not JSON-RPC 2.0"},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/progress"}`, "where the response belongs"},
		{"a number", `7`, "not an object"},
	}
	want := idKey([]byte("7"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := vetReply([]byte(tt.reply), want)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (!errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want a protocol error saying %q", err, tt.want)
			}
		})
	}
}
