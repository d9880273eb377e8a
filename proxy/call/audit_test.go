package call

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// jsonSize counts the bytes json.Marshal would give, without keeping them.
func TestJSONSizeIsMarshalLength(t *testing.T) {
	res := mcp.NewToolResultText(`<b>"quoted" & more</b> ünïcode`)
	for _, v := range []any{res, map[string]any{"a": []int{1, 2}}, "x", json.RawMessage(`{"raw":1}`)} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonSize(v); got != len(b) {
			t.Errorf("jsonSize(%T): got %d, want %d", v, got, len(b))
		}
	}
	if got := jsonSize(nil); got != 0 {
		t.Errorf("jsonSize(nil): got %d, want 0", got)
	}
}
