package wire

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The pre-check takes a Body's bytes as they are, without reading or
// copying them, and still reads any other body, and still replaces
// invalid UTF-8 in either.
func TestPrecheckHTTPTakesHeldBody(t *testing.T) {
	const valid = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"s":"é"}}}`
	const invalid = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"s\":\"\xff\"}}}"
	for _, tc := range []struct {
		name, body, want string
		held, same       bool // a Body; the very one reaches next
	}{
		{"held", valid, valid, true, true},
		{"held invalid UTF-8", invalid, strings.Replace(invalid, "\xff", "\uFFFD", 1), true, false},
		{"read", valid, valid, false, false},
		{"read invalid UTF-8", invalid, strings.Replace(invalid, "\xff", "\uFFFD", 1), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.ReadCloser = io.NopCloser(strings.NewReader(tc.body))
			if tc.held {
				body = NewBody([]byte(tc.body))
			}
			var got string
			var reached io.ReadCloser
			h := PrecheckHTTP{Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached = r.Body
				b, _ := io.ReadAll(r.Body)
				got = string(b)
				if r.ContentLength != int64(len(b)) {
					t.Errorf("ContentLength %d, body %d bytes", r.ContentLength, len(b))
				}
			})}
			r := httptest.NewRequest(http.MethodPost, "/mcp", body)
			r.Header.Set("Content-Type", "application/json")
			r.ContentLength = int64(len(tc.body)) // as Guard sets it
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tc.want {
				t.Errorf("next read %q, want %q", got, tc.want)
			}
			if (reached == body) != tc.same {
				t.Errorf("next got the body passed in: %v, want %v", reached == body, tc.same)
			}
		})
	}
}

// BodyBytes gives a Body's bytes only while it is unread; Reopen starts over.
func TestBodyBytes(t *testing.T) {
	b := NewBody([]byte("abc"))
	if got, ok := BodyBytes(b); !ok || string(got) != "abc" {
		t.Fatalf("BodyBytes = %q, %v; want abc, true", got, ok)
	}
	if _, err := b.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if _, ok := BodyBytes(b); ok {
		t.Error("BodyBytes of a body read from: want false")
	}
	again, _ := b.Reopen()
	if got, _ := io.ReadAll(again); string(got) != "abc" {
		t.Errorf("Reopen read %q, want abc", got)
	}
	if _, ok := BodyBytes(strings.NewReader("abc")); ok {
		t.Error("BodyBytes of another reader: want false")
	}
}

// A handler behind PrecheckHTTP learns the method of the message it
// passed, for that message only, with no copy of the request.
func TestPrecheckedIs(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`
	const escaped = `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"x"}}`
	for _, body := range []string{call, escaped, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`} {
		var is, known bool
		var other bool
		var passed *http.Request
		h := PrecheckHTTP{Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			passed = r
			ctx := WithPrechecked(r.Context(), r.Body) // as the MCP server's context func does
			b, _ := io.ReadAll(r.Body)
			is, known = PrecheckedIs(ctx, b, "tools/call")
			_, other = PrecheckedIs(ctx, append(b, ' '), "tools/call")
		})}
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), r)
		if want := body != `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`; !known || is != want {
			t.Errorf("%s: PrecheckedIs = %v, %v; want %v, true", body, is, known, want)
		}
		if other {
			t.Errorf("%s: PrecheckedIs knows another message", body)
		}
		if passed != r {
			t.Errorf("%s: the handler got a copy of the request, want the request itself", body)
		}
	}
	if _, known := PrecheckedIs(context.Background(), []byte(call), "tools/call"); known {
		t.Error("PrecheckedIs without the pre-check: want unknown")
	}
}
