// Package fakeupstream is a scriptable MCP server for tests: it echoes,
// sleeps, hangs until cancelled, crashes mid-call, reports progress and
// changes its tool list on request. Tests run it in-process, over HTTP, or
// as a stdio child by re-executing the test binary (see MaybeRun).
package fakeupstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// EnvVar, when set in a test binary's environment, makes MaybeRun serve a
// fake upstream over stdio under that name instead of running tests.
const EnvVar = "MCP_ROUTER_FAKE_UPSTREAM"

// CrashFileEnvVar names a file whose presence makes a stdio fake exit at
// start, to script a crash loop.
const CrashFileEnvVar = "MCP_ROUTER_FAKE_CRASH_FILE"

// MaybeRun serves a fake upstream over stdin/stdout and exits when EnvVar
// is set; otherwise it returns at once. Call it first in TestMain.
func MaybeRun() {
	name := os.Getenv(EnvVar)
	if name == "" {
		return
	}
	if f := os.Getenv(CrashFileEnvVar); f != "" {
		if _, err := os.Stat(f); err == nil {
			fmt.Fprintln(os.Stderr, "fake upstream: crash file present, exiting at start")
			os.Exit(1)
		}
	}
	err := server.NewStdioServer(serverOf(name)).Listen(context.Background(), os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake upstream:", err)
	}
	os.Exit(0)
}

// Command returns the command line that runs a fake upstream named name
// as a stdio child: this test binary, with EnvVar set.
func Command(name string) (command string, env map[string]string) {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return exe, map[string]string{EnvVar: name}
}

// New builds a fake upstream server. Its tools:
//
//	echo {text}            returns text (and name of the server)
//	sleep {ms}             returns after ms milliseconds or when cancelled
//	hang {}                blocks until cancelled, then counts a cancellation;
//	                       with a progress token it first reports progress 0
//	cancellations {}       how many calls were cancelled so far
//	crash {stderr?}        writes stderr (if any) to stderr, then exits the process
//	                       with code 3 mid-call (stdio children only)
//	progress {steps}       sends steps progress notifications, then returns
//	fail {}                returns an isError result
//	getenv {name}          returns the variable's value in the server's environment
//	add_tool {name, description?}  adds or redefines a tool (list_changed follows)
//	pid {}                 the server's process id
//	sample {prompt}        asks the client to sample (sampling/createMessage), returns its text
//	log {}                 sends three log messages (info, warning, error), then returns
//	big {bytes}            returns a text of that many bytes on one line
//	garbage {}             writes malformed lines to stdout (stdio only), then returns
//	storm {n}              sends n tools/list_changed notifications
//	list_calls {}          how many tools/list requests the server answered
//	argv {}                the process's os.Args and os.Environ as JSON {"args","env"};
//	                       its annotations claim read-only, not destructive,
//	                       idempotent and closed world
//	rich {text}            returns text as a text item, an embedded text resource
//	                       and structuredContent {"items":[{"token":text}],"big":<20-digit integer>}
//	find_record {id | handle}  returns {"key": id or handle} as structuredContent;
//	                       its schemas use keywords mcp-go's typed schemas
//	                       drop (FindRecordInputSchema, FindRecordOutputSchema)
func New(name string) *server.MCPServer {
	f := &fake{name: name}
	hooks := &server.Hooks{}
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { f.listCalls.Add(1) })
	f.srv = server.NewMCPServer(name, "1.0.0", server.WithToolCapabilities(true), server.WithLogging(), server.WithHooks(hooks),
		server.WithPromptCapabilities(true), server.WithResourceCapabilities(false, true))
	f.addTools()
	f.srv.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptDescription("Greets someone"),
		mcp.WithArgument("who", mcp.RequiredArgument())), f.greet)
	f.srv.AddResource(mcp.NewResource("fake://"+name+"/readme", "readme", mcp.WithMIMEType("text/plain")), f.readme)
	return f.srv
}

type fake struct {
	name      string
	srv       *server.MCPServer
	cancelled atomic.Int64
	listCalls atomic.Int64
}

func (f *fake) addTools() {
	f.srv.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text back"),
		mcp.WithString("text", mcp.Required())), f.echo)
	f.srv.AddTool(mcp.NewTool("sleep", mcp.WithDescription("Sleep for ms milliseconds"),
		mcp.WithNumber("ms", mcp.Required())), f.sleep)
	f.srv.AddTool(mcp.NewTool("hang", mcp.WithDescription("Never answer until cancelled")), f.hang)
	f.srv.AddTool(mcp.NewTool("cancellations", mcp.WithDescription("Count cancelled calls")), f.cancellations)
	f.srv.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exit the process mid-call"),
		mcp.WithString("stderr")), f.crash)
	f.srv.AddTool(mcp.NewTool("progress", mcp.WithDescription("Report progress"),
		mcp.WithNumber("steps", mcp.Required())), f.progress)
	f.srv.AddTool(mcp.NewTool("fail", mcp.WithDescription("Always fail")), f.fail)
	f.srv.AddTool(mcp.NewTool("getenv", mcp.WithDescription("Read an environment variable"),
		mcp.WithString("name", mcp.Required())), f.getenv)
	f.srv.AddTool(mcp.NewTool("add_tool", mcp.WithDescription("Add a tool"),
		mcp.WithString("name", mcp.Required()), mcp.WithString("description")), f.addTool)
	f.srv.AddTool(mcp.NewTool("pid", mcp.WithDescription("Process id")), f.pid)
	f.srv.AddTool(mcp.NewTool("sample", mcp.WithDescription("Ask the client's model"),
		mcp.WithString("prompt", mcp.Required())), f.sample)
	f.srv.AddTool(mcp.NewTool("log", mcp.WithDescription("Send log messages")), f.log)
	f.srv.AddTool(mcp.NewTool("big", mcp.WithDescription("Return a large text"),
		mcp.WithNumber("bytes", mcp.Required())), f.big)
	f.srv.AddTool(mcp.NewTool("garbage", mcp.WithDescription("Write malformed lines")), f.garbage)
	f.srv.AddTool(mcp.NewTool("storm", mcp.WithDescription("Send many list_changed notifications"),
		mcp.WithNumber("n", mcp.Required())), f.storm)
	f.srv.AddTool(mcp.NewTool("list_calls", mcp.WithDescription("Count tools/list requests")), f.listCallsTool)
	f.srv.AddTool(mcp.NewTool("argv", mcp.WithDescription("The server's argv and environment variables as JSON"),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)), f.argv)
	f.srv.AddTool(mcp.NewTool("rich", mcp.WithDescription("Return the text in every kind of result content"),
		mcp.WithString("text", mcp.Required())), f.rich)
	findRecord := mcp.NewToolWithRawSchema("find_record", "Find a record by its id or by its handle",
		json.RawMessage(FindRecordInputSchema))
	findRecord.RawOutputSchema = json.RawMessage(FindRecordOutputSchema)
	f.srv.AddTool(findRecord, f.findRecord)
}

func (f *fake) echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text := req.GetString("text", "")
	return mcp.NewToolResultStructured(map[string]any{"text": text, "server": f.name}, text), nil
}

func (f *fake) sleep(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	d := time.Duration(req.GetFloat("ms", 0)) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return mcp.NewToolResultText("slept " + d.String()), nil
	case <-ctx.Done():
		f.cancelled.Add(1)
		return nil, ctx.Err()
	}
}

func (f *fake) hang(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	// Tell a caller that asked for progress that the call has arrived, so
	// it can cancel knowing the upstream is waiting.
	if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
		_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress),
			map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": 0, "message": "waiting"})
	}
	<-ctx.Done()
	f.cancelled.Add(1)
	return nil, ctx.Err()
}

func (f *fake) cancellations(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(strconv.FormatInt(f.cancelled.Load(), 10)), nil
}

func (f *fake) crash(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if text := req.GetString("stderr", ""); text != "" {
		fmt.Fprintln(os.Stderr, text)
	}
	os.Exit(3)
	return nil, nil
}

func (f *fake) progress(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	steps := int(req.GetFloat("steps", 1))
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	for i := 1; token != nil && i <= steps; i++ {
		err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress),
			map[string]any{"progressToken": token, "progress": i, "total": steps, "message": fmt.Sprintf("step %d", i)})
		if err != nil {
			return nil, err
		}
	}
	// mcp-go queues notifications apart from responses; give the queue a
	// moment so the progress is written before the result.
	time.Sleep(50 * time.Millisecond)
	return mcp.NewToolResultText(fmt.Sprintf("done %d steps", steps)), nil
}

func (f *fake) fail(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultError("this tool always fails"), nil
}

func (f *fake) getenv(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	v, ok := os.LookupEnv(req.GetString("name", ""))
	if !ok {
		return mcp.NewToolResultText("<unset>"), nil
	}
	return mcp.NewToolResultText(v), nil
}

func (f *fake) addTool(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.GetString("name", "")
	f.srv.AddTool(mcp.NewTool(name, mcp.WithDescription(req.GetString("description", "Added at run time"))), f.echo)
	return mcp.NewToolResultText("added " + name), nil
}

func (f *fake) pid(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(strconv.Itoa(os.Getpid())), nil
}

func (f *fake) greet(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	who := req.Params.Arguments["who"]
	return mcp.NewGetPromptResult("greeting", []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Hello, "+who+", from "+f.name)),
	}), nil
}

func (f *fake) readme(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain",
		Text: "readme of " + f.name}}, nil
}

func (f *fake) sample(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	//lint:ignore SA1019 the fake asks for sampling to test its passthrough for clients of 2025-11-25
	res, err := server.ServerFromContext(ctx).RequestSampling(ctx, mcp.CreateMessageRequest{
		CreateMessageParams: mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
			MaxTokens: 50,
		},
	})
	if err != nil {
		return mcp.NewToolResultError("sampling: " + err.Error()), nil
	}
	text, _ := res.Content.(mcp.TextContent)
	return mcp.NewToolResultText("sampled: " + text.Text), nil
}

func (f *fake) log(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	srv := server.ServerFromContext(ctx)
	for _, lvl := range []mcp.LoggingLevel{mcp.LoggingLevelInfo, mcp.LoggingLevelWarning, mcp.LoggingLevelError} {
		n := mcp.NewLoggingMessageNotification(lvl, f.name, "message at "+string(lvl))
		if err := srv.SendLogMessageToClient(ctx, n); err != nil {
			return nil, err
		}
	}
	time.Sleep(50 * time.Millisecond) // let the notifications go out before the result
	return mcp.NewToolResultText("logged"), nil
}

func (f *fake) big(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(strings.Repeat("x", int(req.GetFloat("bytes", 0)))), nil
}

func (f *fake) garbage(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	for _, line := range []string{"this is not json", `{"foo": 1}`, `{"jsonrpc": "1.0", "id": 424242, "result": {}}`,
		`{"jsonrpc": "2.0", "id": 434343, "result": {}}`, `[1, 2, 3]`} {
		fmt.Fprintln(os.Stdout, line)
	}
	return mcp.NewToolResultText("wrote garbage"), nil
}

func (f *fake) storm(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n := int(req.GetFloat("n", 0))
	for range n {
		f.srv.SendNotificationToAllClients(string(mcp.MethodNotificationToolsListChanged), nil)
	}
	return mcp.NewToolResultText(fmt.Sprintf("sent %d", n)), nil
}

func (f *fake) listCallsTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(strconv.FormatInt(f.listCalls.Load(), 10)), nil
}

// Argv is what the argv tool returns.
type Argv struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
}

func (f *fake) argv(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultJSON(Argv{Args: os.Args, Env: os.Environ()})
}

// BigNumber is the integer in rich's structuredContent: more digits than
// a float64 holds.
const BigNumber = "12345678901234567890"

func (f *fake) rich(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text := req.GetString("text", "")
	res := mcp.NewToolResultText(text)
	res.Content = append(res.Content, mcp.NewEmbeddedResource(mcp.TextResourceContents{
		URI: "fake://" + f.name + "/rich", MIMEType: "text/plain", Text: text}))
	res.StructuredContent = map[string]any{"items": []any{map[string]any{"token": text}}, "big": json.Number(BigNumber)}
	return res, nil
}

// FindRecordInputSchema is the find_record tool's input schema: a top-level
// description and anyOf, which mcp-go's typed ToolInputSchema has no room
// for.
const FindRecordInputSchema = `{"type":"object","description":"Give the record's id, its handle, or both.",` +
	`"properties":{"id":{"type":"integer","minimum":1},"handle":{"type":"string","pattern":"^@"}},` +
	`"anyOf":[{"required":["id"]},{"required":["handle"]}],"additionalProperties":false}`

// FindRecordOutputSchema is the find_record tool's output schema: a top-level $ref
// into $defs, which mcp-go's typed ToolOutputSchema drops.
const FindRecordOutputSchema = `{"type":"object","$ref":"#/$defs/record",` +
	`"$defs":{"record":{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}}}`

func (f *fake) findRecord(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	key := req.GetString("handle", "")
	if id, ok := req.GetArguments()["id"].(float64); ok {
		key = strconv.FormatFloat(id, 'f', -1, 64)
	}
	return mcp.NewToolResultStructured(map[string]any{"key": key}, key), nil
}

// Endless answers an HTTP request with a reply of content type ctype that
// starts with prefix and never ends a line, flushing 32 KiB at a time
// until the client stops reading (or 1 GiB is out); written counts the
// bytes sent. Tests of the gateway's bounds on upstream streams serve it.
func Endless(w http.ResponseWriter, ctype, prefix string, written *atomic.Int64) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, prefix)
	chunk := []byte(strings.Repeat("x", 32<<10))
	for written.Load() < 1<<30 {
		n, err := w.Write(chunk)
		written.Add(int64(n))
		if err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}
