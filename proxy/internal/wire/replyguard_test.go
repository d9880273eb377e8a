package wire

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// An HTTP upstream's event stream, checked event by event (FI-02, FI-10).

// readSSE reads an event stream through sseReply for the request with
// id 1, and returns what mcp-go would read, the call's check and the error
// it ends with.
func readSSE(t *testing.T, stream string) (string, *ReplyCheck, error) {
	t.Helper()
	check := &ReplyCheck{}
	body := io.NopCloser(strings.NewReader(stream))
	r := &sseReply{reply: &reply{check: check, report: func(error) {}, want: idKey([]byte("1")), max: 1 << 10},
		body: body, r: bufio.NewReader(body)}
	got, err := io.ReadAll(r)
	return string(got), check, err
}

func TestSSEReply(t *testing.T) {
	const response = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	const progress = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	t.Run("whole", func(t *testing.T) {
		stream := "id: a\ndata:\n\n" + progress + response
		got, check, err := readSSE(t, stream)
		if got != stream || err != nil || check.Problem() != nil {
			t.Errorf("got %q, %v, %v; want the stream as is", got, err, check.Problem())
		}
	})
	t.Run("cut inside an event", func(t *testing.T) {
		unfinished := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
		got, check, err := readSSE(t, progress+unfinished)
		if !errors.Is(err, io.ErrUnexpectedEOF) || check.Problem() != nil {
			t.Errorf("got %v, %v; want io.ErrUnexpectedEOF and no protocol error", err, check.Problem())
		}
		if strings.Contains(got, "\"id\":1") && strings.HasSuffix(got, "\n\n") {
			t.Errorf("the unfinished event was finished: %q", got)
		}
	})
	t.Run("cut inside a line", func(t *testing.T) {
		_, _, err := readSSE(t, progress+"data: {\"jsonrpc\"")
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("got %v, want io.ErrUnexpectedEOF", err)
		}
	})
	for name, stream := range map[string]string{
		"not JSON":          "data: {not json\n\n",
		"another request":   "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n",
		"both a result":     "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}\n\n",
		"not JSON-RPC 2.0":  "data: {\"id\":1,\"result\":{}}\n\n",
		"message too large": "data: " + strings.Repeat("x", 2<<10) + "\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			got, check, err := readSSE(t, progress+stream)
			if err == nil || check.Problem() != err || !strings.Contains(err.Error(), name) {
				t.Errorf("got %v (kept %v), want an error saying %q", err, check.Problem(), name)
			}
			// Its lines may go on, but never the blank line that dispatches it.
			if rest, ok := strings.CutPrefix(got, progress); !ok || strings.Contains(rest, "\n\n") {
				t.Errorf("handed on %q, want the good event before and the bad one unfinished", got)
			}
		})
	}
}

// roundTripFunc is an http.RoundTripper of a func.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A call that said the id it posts (Posts) has its reply checked against
// that id without its request read back; the next request of the call is
// read, as any.
func TestReplyGuardTakesThePostedID(t *testing.T) {
	reply := `{"jsonrpc":"2.0","id":"mcp-router/tools/call/7","result":{}}`
	g := &ReplyGuard{Max: 1 << 10, Report: func(error) {}, Next: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(reply))}, nil
	})}
	ctx, check := WithReplyCheck(t.Context())
	Posts(ctx, "mcp-router/tools/call/7")
	post := func(body string) (reads int, err error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://upstream/mcp", strings.NewReader(body))
		getBody := req.GetBody
		req.GetBody = func() (io.ReadCloser, error) { reads++; return getBody() }
		resp, err := g.RoundTrip(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
		}
		return reads, err
	}
	if reads, err := post(`{"jsonrpc":"2.0","id":"mcp-router/tools/call/7","method":"tools/call"}`); reads != 0 || err != nil {
		t.Errorf("the posted call: its body read back %d times, %v; want none, and its reply passed", reads, err)
	}
	reads, err := post(`{"jsonrpc":"2.0","id":8,"method":"tools/call"}`)
	if reads != 1 || err == nil || check.Problem() == nil {
		t.Errorf("the next request: its body read back %d times, %v; want once, and the reply of another id refused", reads, err)
	}
}
