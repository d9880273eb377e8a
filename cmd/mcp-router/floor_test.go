package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// floorEnvVar, when set in the test binary's environment, makes it a
// forwarder that does nothing but pass bytes between a client and an
// upstream: the floor arms of BenchmarkCall, the least a process in the
// middle can cost on this machine. "stdio" runs the command line in its
// arguments as a child and copies stdin to the child and the child's
// stdout back, without looking at a byte; "http" splices TCP
// connections to the host of the URL in its first argument, without
// parsing HTTP, and logs its own URL on stderr as serve does.
const floorEnvVar = "MCP_ROUTER_BENCH_FLOOR"

// runFloorIfAsked runs the forwarder and exits when floorEnvVar is set;
// otherwise it returns at once. TestMain calls it before running tests.
func runFloorIfAsked() {
	mode := os.Getenv(floorEnvVar)
	if mode == "" {
		return
	}
	// The stdio forwarder's child inherits the environment: it must not
	// become a forwarder too when it is this binary.
	os.Unsetenv(floorEnvVar)
	var err error
	switch mode {
	case "stdio":
		err = floorStdio(os.Args[1:])
	case "http":
		err = floorHTTP(os.Args[1:])
	default:
		err = fmt.Errorf("%s=%q: want stdio or http", floorEnvVar, mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// floorCommand is the command (this test binary) and the environment that
// run the forwarder of the given mode; its arguments follow the command.
func floorCommand(tb testing.TB, mode string) (exe string, env []string) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return exe, []string{floorEnvVar + "=" + mode}
}

// floorStdio runs args as a child and copies bytes both ways until the
// child's stdout ends. The end of our stdin closes the child's, so the
// child (and then this process) exits when the client goes. The copy of
// stdin ends with the process when the child exits first.
func floorStdio(args []string) error {
	if len(args) == 0 {
		return errors.New("stdio: no command to run")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", args[0], err)
	}
	go func() {
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	_, copyErr := io.Copy(os.Stdout, out)
	return errors.Join(copyErr, cmd.Wait())
}

// floorHTTP listens on a free port of 127.0.0.1 and splices each
// connection to the host of the URL in args[0]: accept, dial, and copy
// bytes both ways (io.Copy between TCP connections is splice(2) on
// Linux), without parsing a byte of HTTP. It runs until the process is
// terminated.
func floorHTTP(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("http: want one upstream URL, got %q", args)
	}
	target, err := url.Parse(args[0])
	if err != nil || target.Scheme != "http" || target.Host == "" {
		return fmt.Errorf("http: upstream URL %q: want http://host:port (%v)", args[0], err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "floor listening url=http://%s/mcp\n", ln.Addr())
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go splice(conn, target.Host)
	}
}

// splice connects client to addr and copies bytes both ways until either
// side ends, then closes both; the copy it starts ends before it returns.
func splice(client net.Conn, addr string) {
	defer client.Close()
	upstream, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(upstream, client)
		upstream.Close() // the client went: end the copy back
	}()
	io.Copy(client, upstream)
	client.Close() // the upstream went: end the copy there
	<-done
}

// The floor forwarders carry a real client's calls to the calculator and
// its answers back, over stdio and over HTTP, so the floor arms measure a
// working path; the stdio forwarder and its child exit cleanly when the
// client closes.
func TestFloorForwardsCalls(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	add := func(t *testing.T, c *client.Client) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = "add"
		req.Params.Arguments = map[string]any{"a": 2, "b": 3}
		res, err := c.CallTool(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				got.WriteString(tc.Text)
			}
		}
		if res.IsError || strings.TrimSpace(got.String()) != "5" {
			t.Fatalf("add 2 3 through the floor: got %q (error %v), want 5", got.String(), res.IsError)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		exe, env := floorCommand(t, "stdio")
		c, _ := stdioClientPID(t, env, exe, bin, "builtin", "calculator")
		add(t, c)
		// Close ends the forwarder's stdin and waits: nil means it exited
		// by itself with status 0, which it does only once its child has.
		if err := c.Close(); err != nil {
			t.Fatalf("closing the client: got %v, want the forwarder to exit cleanly", err)
		}
	})
	t.Run("http", func(t *testing.T) {
		calcURL, _ := startHTTPServer(t, dir, nil, bin, "builtin", "calculator", "--http", "127.0.0.1:0")
		exe, env := floorCommand(t, "http")
		floorURL, _ := startHTTPServer(t, dir, env, exe, calcURL)
		add(t, httpClient(t, floorURL+"/mcp"))
	})
}

// The HTTP floor copies bytes and parses none: bytes that are not HTTP at
// all come back unchanged from a TCP echo server behind it (a reverse
// proxy would answer them 400), so its cost is the least any HTTP proxy
// could have.
func TestFloorHTTPOnlyCopiesBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	echoed := make(chan struct{})
	go func() {
		defer close(echoed)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		io.Copy(conn, conn)
	}()
	t.Cleanup(func() {
		ln.Close()
		<-echoed
	})
	exe, env := floorCommand(t, "http")
	floorURL, _ := startHTTPServer(t, t.TempDir(), env, exe, "http://"+ln.Addr().String())
	conn, err := net.Dial("tcp", strings.TrimPrefix(floorURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	want := "not HTTP \x00\x01\xff\r\n\r\n"
	if _, err := io.WriteString(conn, want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != want {
		t.Fatalf("through the floor: got %q (%v), want the bytes sent, %q", got, err, want)
	}
}
