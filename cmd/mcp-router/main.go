// Command mcp-router is an MCP gateway: one MCP server in front of many, showing the model a small
// belt of tools. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-router/mcp-router/internal/printable"
	"github.com/mcp-router/mcp-router/proxy"
)

func main() {
	proxy.MaybeRunWatchdog() // when started as the watchdog of another mcp-router
	guardChildren = startChildGuard
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	stopChildGuard()
	if err != nil {
		var usage *usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "mcp-router:", printable.Lines(err.Error()))
		os.Exit(1)
	}
}

// run is the whole program, testable: arguments and streams in, an error out.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.LookupEnv}
	root := newRootCmd(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if cerr := e.closeState(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// usageError marks errors in how the command was invoked (cobra already printed the usage).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }
