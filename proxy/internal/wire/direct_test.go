package wire

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestSendHandsTheReplyToItsCaller: a request sent by StdinTap.Send gets
// its reply on its own channel (a broken one as a protocol error line),
// and mcp-go's reader never sees it, while the replies to mcp-go's own
// requests still reach mcp-go; when the child's output ends, a request
// that waits still has its channel closed, and Send fails from then on.
func TestSendHandsTheReplyToItsCaller(t *testing.T) {
	pending := &PendingIDs{}
	var sent strings.Builder
	tap := StdinTap{W: nopWriteCloser{&sent}, Pending: pending}
	if _, err := tap.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	send := func(id string) <-chan []byte {
		t.Helper()
		reply, err := tap.Send([]byte(`"`+id+`"`), []byte(`{"jsonrpc":"2.0","id":"`+id+`","method":"tools/call","params":{"name":"b"}}`+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return reply
	}
	good, broken, waits := send("d1"), send("d2"), send("d3")
	if got := strings.Count(sent.String(), "\n"); got != 4 {
		t.Fatalf("requests written: %d, want 4:\n%s", got, sent.String())
	}
	mine := `{"jsonrpc":"2.0","id":"d1","result":{"content":[]}}`
	theirs := `{"jsonrpc":"2.0","id":1,"result":{}}`
	lines := []string{mine, `{"jsonrpc":"2.0","id":"d2","result":{},"error":{"code":1,"message":"x"}}`, theirs}
	v := NewLineVet(strings.NewReader(strings.Join(lines, "\n")+"\n"), pending, func(error, int) {}, func(int) {})
	got, err := io.ReadAll(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != theirs+"\n" {
		t.Errorf("mcp-go read %q, want only %q", got, theirs+"\n")
	}
	if line := <-good; string(line) != mine+"\n" {
		t.Errorf("reply to d1: %q, want %q", line, mine+"\n")
	}
	if line := strings.TrimSuffix(string(<-broken), "\n"); describe(line) != `error "d2"` {
		t.Errorf("reply to d2: %q, want a protocol error", line)
	}
	if line, ok := <-waits; ok {
		t.Errorf("d3 got %q after the output ended, want its channel closed", line)
	}
	if _, err := tap.Send([]byte(`"d4"`), []byte("{}\n")); !errors.Is(err, ErrOutputEnded) {
		t.Errorf("Send after the output ended: %v, want ErrOutputEnded", err)
	}
	if !pending.Empty() {
		t.Errorf("requests still pending: %v", pending.ids)
	}
}
