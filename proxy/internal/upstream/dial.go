package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// BuiltinFunc builds a built-in server by name with its flags.
type BuiltinFunc func(name string, args []string) (*server.MCPServer, error)

// dial opens a client connection to an upstream, started but not
// initialized; a stdio child's stderr goes to stderr and tail. ctx must
// not carry a deadline: the stdio transport keeps it for the connection.
func dial(ctx context.Context, cfg Config, logger *slog.Logger, stderr *stderrLog, tail *lineTail, opts ...client.ClientOption) (*Conn, error) {
	switch cfg.Transport {
	case TransportStdio:
		return dialStdio(ctx, cfg, logger, stderr, tail, opts)
	case TransportStreamableHTTP, TransportSSE:
		return dialHTTP(ctx, cfg, logger, opts)
	default:
		return nil, fmt.Errorf("upstream %s: unknown transport %q", cfg.Name, cfg.Transport)
	}
}

func clientOptions(cfg Config, extra []client.ClientOption) []client.ClientOption {
	if v := cfg.protocolVersion(); v != "" {
		return append(extra, client.WithProtocolVersion(v))
	}
	return extra
}

func dialStdio(ctx context.Context, cfg Config, logger *slog.Logger, stderr *stderrLog, tail *lineTail, opts []client.ClientOption) (*Conn, error) {
	ch, err := startChild(cfg, stderr, tail)
	if err != nil {
		return nil, err
	}
	var live atomic.Pointer[Conn] // set once the conn exists; the reader may overflow before
	out := &lineLimit{r: ch.stdout, max: cfg.maxMessageBytes(), overflow: func(err error) {
		if c := live.Load(); c != nil {
			c.markLost(err)
		}
	}}
	pending := &wire.PendingIDs{}
	vet := wire.NewLineVet(out, pending, func(err error, size int) {
		logger.Warn("broken line from upstream dropped", "err", err, "bytes", size)
		if c := live.Load(); c != nil {
			c.violation(err)
		}
	}, func(size int) {
		logger.Debug("response to no waiting request dropped (late, or unknown id)", "bytes", size)
	})
	in := wire.StdinTap{W: ch.stdin, Pending: pending}
	cl := client.NewClient(transport.NewIO(vet, in, nil), clientOptions(cfg, opts)...)
	if err := cl.Start(ctx); err != nil {
		ch.stop()
		return nil, err
	}
	c := newConn(cl, func() {
		cl.Close()
		ch.stop()
	})
	c.settled = pending.Empty
	c.stdin = &in
	c.work = func() uint64 { return tail.count() + treeWork(ch.tag) }
	live.Store(c)
	go func() { // ends when the child exits, which stop guarantees
		<-ch.done
		tail.wait(exitWait) // the child's last words may still be in the pipe
		lines := tail.lines()
		why := explainingLine(lines)
		if c.served() { // a line that names no error, a banner say, is not why a served child ended
			why = reasonLine(lines)
		}
		c.markLost(&exitError{err: ch.err, stderr: why})
	}()
	return c, nil
}

func dialHTTP(ctx context.Context, cfg Config, logger *slog.Logger, opts []client.ClientOption) (*Conn, error) {
	var live atomic.Pointer[Conn] // set once the conn exists; the handshake's replies come before
	var tr transport.Interface
	var err error
	report := func(err error) {
		logger.Warn("reply from upstream refused", "err", err)
		if c := live.Load(); c != nil {
			c.violation(err)
		}
	}
	authorize, withAuth := withAuthorizer(cfg)
	base := http.RoundTripper(upstreamTransport)
	if withAuth {
		base = cfg.Authorizer.Observe(base) // a 403 asking for more scope needs a new login
	}
	bounded := &boundedBodies{next: base, max: cfg.maxMessageBytes(), maxError: cfg.maxErrorBodyBytes(), report: report}
	if cfg.Transport == TransportSSE {
		sseOpts := []transport.ClientOption{transport.WithHeaders(cfg.Headers), transport.WithHTTPClient(&http.Client{Transport: bounded, CheckRedirect: sameOriginRedirects})}
		if withAuth {
			sseOpts = append(sseOpts, transport.WithHeaderFunc(authorize))
		}
		tr, err = transport.NewSSE(cfg.URL, sseOpts...)
	} else {
		bounded.next = &wire.ReplyGuard{Next: base, Max: cfg.maxMessageBytes(), Report: report}
		httpOpts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(cfg.Headers),
			//lint:ignore SA1019 the standalone GET stream is how a 2025-11-25 upstream, the default era, sends notifications
			transport.WithContinuousListening(),
			transport.WithHTTPLogger(logger), transport.WithHTTPBasicClient(&http.Client{Transport: bounded, CheckRedirect: sameOriginRedirects})}
		if withAuth {
			httpOpts = append(httpOpts, transport.WithHTTPHeaderFunc(authorize))
		}
		tr, err = transport.NewStreamableHTTP(cfg.URL, httpOpts...)
	}
	if err != nil {
		return nil, fmt.Errorf("upstream %s: %w", cfg.Name, err)
	}
	cl := client.NewClient(tr, clientOptions(cfg, opts)...)
	if err := cl.Start(ctx); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.host(), WithoutURL(err))
	}
	c := newConn(cl, func() { cl.Close() })
	live.Store(c)
	cl.OnConnectionLost(func(err error) { c.markLost(err) })
	return c, nil
}

// dialInProcess connects to a built-in server in this process.
func dialInProcess(ctx context.Context, build BuiltinFunc, cfg Config) (*Conn, error) {
	srv, err := build(cfg.Builtin, cfg.Args)
	if err != nil {
		return nil, fmt.Errorf("builtin %s: %w", cfg.Builtin, err)
	}
	cl, err := client.NewInProcessClient(srv)
	if err != nil {
		return nil, err
	}
	if err := cl.Start(ctx); err != nil {
		return nil, err
	}
	return newConn(cl, func() { cl.Close() }), nil
}

// IsTransportError tells a broken connection (a stdio child that exited
// among them) from an error the upstream answered with.
func IsTransportError(err error) bool {
	var te *transport.Error
	var exit *exitError
	return errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed) || errors.As(err, &exit)
}

// failsOneRequest tells a transport error that fails one request from one
// that loses the connection. Over HTTP each call is its own request: an
// error status or a cut reply stream fails that call (counted as a
// violation), while an ended session, a closed transport or an
// unreachable server loses the connection. Over stdio every transport
// error loses it: there is one stream.
func failsOneRequest(cfg Config, err error) bool {
	if !cfg.remote() {
		return false
	}
	if errors.Is(err, transport.ErrSessionTerminated) || errors.Is(err, transport.ErrTransportClosed) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	return true
}

// lineLimit bounds the lines a stdio upstream writes: past max bytes
// without a newline the read fails with wire.ErrMessageTooLarge and the
// connection is given up (its framing is lost).
type lineLimit struct {
	r        io.Reader
	max, cur int
	overflow func(error) // called once, when the limit is passed
	failed   bool
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.failed {
		return 0, wire.ErrMessageTooLarge
	}
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			l.cur = 0
			continue
		}
		if l.cur++; l.cur > l.max {
			l.failed = true
			err := fmt.Errorf("%w: a message over %d bytes", wire.ErrMessageTooLarge, l.max)
			l.overflow(err)
			return i, err
		}
	}
	return n, err
}
