package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/state"
)

// brokenProfile has one healthy upstream and four that fail each its own
// way: a command not on PATH, a child that exits with code 3 after a line
// on stderr, a remote that answers 401, and the extra lines' upstreams.
func brokenProfile(t *testing.T, remoteURL, extra string) string {
	return writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf(`profiles:
  default:
    upstreams:
      calculator: {builtin: calculator}
      missing: {command: no-such-mcp-server-anywhere}
      exits: {command: sh, args: ["-c", "echo 'config file not found: settings.json' >&2; exit 3"]}
      remote: {url: %q}
`, remoteURL)+extra)
}

// unauthorized is a remote MCP server that wants a token it is never given.
func unauthorized(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// doctor, run as the built binary, reports each upstream: started,
// initialized with its protocol, tools, authorization needed, and a fix
// for each failure; it exits 1 when any failed.
func TestDoctorReportsEachUpstreamWithAFix(t *testing.T) {
	bin := buildBinary(t)
	hung := "      hung: {command: sh, args: [\"-c\", \"cat >/dev/null\"]}\n" + // never answers
		"      badcwd: {command: sh, args: [\"-c\", \"cat >/dev/null\"], cwd: /no-such-folder-anywhere}\n" +
		"      wrongpath: {command: sh, args: [\"-c\", \"test -d \\\"$0\\\" || exit 1\", /no-such-notes-folder]}\n"
	cfg := brokenProfile(t, unauthorized(t).URL+"/mcp?key=s3cret", hung)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "doctor", "--json", "--timeout", "500ms", "--config", cfg, "--log-level", "error")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	got := failedDoctor(t, cmd, &stdout, &stderr)
	if c := got["calculator"]; !c.OK || !c.Started || !c.Initialized || c.Protocol == "" || c.Tools != 17 {
		t.Errorf("calculator: %+v, want ok, initialized with a protocol, 17 tools", c)
	}
	if c := got["missing"]; c.OK || c.Started || !strings.Contains(c.Hint, "not found") || !strings.Contains(c.Hint, "PATH") {
		t.Errorf("missing: %+v, want not started, with a PATH hint", c)
	}
	if c := got["exits"]; c.OK || !c.Started || !strings.Contains(c.Hint, "code 3") ||
		!strings.Contains(strings.Join(c.Stderr, "\n"), "config file not found") {
		t.Errorf("exits: %+v, want the exit code and its last stderr lines", c)
	}
	if c := got["remote"]; c.OK || !c.AuthNeeded || !strings.Contains(c.Hint, "token") || strings.Contains(c.Error, "s3cret") {
		t.Errorf("remote: %+v, want authorization needed, a token hint, no URL key", c)
	}
	if c := got["hung"]; c.OK || !c.Started || c.Initialized || !strings.Contains(c.Error, "no answer to initialize") || !strings.Contains(c.Hint, "hangs") {
		t.Errorf("hung: %+v, want started, no answer to initialize, a hint that it hangs", c)
	}
	if c := got["badcwd"]; c.OK || c.Started || !strings.Contains(c.Error, "/no-such-folder-anywhere") ||
		!strings.Contains(c.Hint, "cwd") || strings.Contains(c.Hint, "not found") {
		t.Errorf("badcwd: %+v, want not started, the folder named, a hint about cwd (the command is there)", c)
	}
	if c := got["wrongpath"]; c.OK || !strings.Contains(c.Hint, "/no-such-notes-folder, which does not exist") || !strings.Contains(c.Hint, "code 1") {
		t.Errorf("wrongpath: %+v, want a hint naming the missing path in its args, and the exit code", c)
	}
	for _, name := range []string{"missing", "exits", "remote", "hung"} {
		if !strings.Contains(stderr.String(), name) {
			t.Errorf("doctor's error %q does not name %s", stderr.String(), name)
		}
	}
}

// A child that exits saying nothing (npx when a package's install script
// fails) gets a fix that says where to look, not "read its last stderr
// lines below" above no lines; a url whose host does not resolve gets one
// about the url, not "read the log", as does a url that refuses a streamable
// HTTP initialize (an SSE server's); docker with no daemon is quoted for
// its reason, not its last line.
func TestDoctorSaysWhereToLookWhenTheErrorSaysLittle(t *testing.T) {
	bin := buildBinary(t)
	sse := httptest.NewServer(http.NotFoundHandler()) // an old server: no POST at its url
	t.Cleanup(sse.Close)
	cfg := writeFile(t, t.TempDir(), "p.yaml", `profiles:
  default:
    upstreams:
      silent: {command: sh, args: ["-c", "exit 1"]}
      nohost: {url: "http://no-such-host.invalid/mcp"} # never resolves (RFC 2606)
      legacy: {url: "`+sse.URL+`/mcp"}
      docker: {command: sh, args: ["-c", "echo '`+dockerDown+`' >&2; echo \"Run 'docker run --help' for more information\" >&2; exit 125"]}
`)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "doctor", "--json", "--timeout", "20s", "--config", cfg, "--log-level", "error")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	got := failedDoctor(t, cmd, &stdout, &stderr)
	if c := got["silent"]; !strings.Contains(c.Hint, "code 1 and wrote nothing on stderr") || !strings.Contains(c.Hint, "_logs") || strings.Contains(c.Hint, "below") {
		t.Errorf("silent: got hint %q, want the exit code, that it said nothing, and npm's log", c.Hint)
	}
	if c := got["nohost"]; !strings.Contains(c.Hint, "host name does not resolve") {
		t.Errorf("nohost: got hint %q (error %q), want one about the url's host", c.Hint, c.Error)
	}
	if c := got["legacy"]; !strings.Contains(c.Hint, "transport: sse") {
		t.Errorf("legacy: got hint %q (error %q), want one naming transport: sse", c.Hint, c.Error)
	}
	if c := got["docker"]; !strings.Contains(c.Error, dockerDown) {
		t.Errorf("docker: got error %q, want docker's reason %q", c.Error, dockerDown)
	}
}

// dockerDown is what docker run says with no daemon to talk to.
const dockerDown = "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"

// tools prints what it got and exits non-zero naming the upstreams that
// failed to connect.
func TestToolsExitsNonZeroNamingFailedUpstreams(t *testing.T) {
	cfg := brokenProfile(t, unauthorized(t).URL+"/mcp", "")
	out, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "error")
	if err == nil {
		t.Fatal("tools: exit 0 with three upstreams down")
	}
	for _, name := range []string{"missing", "exits", "remote"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	if strings.Contains(err.Error(), "calculator") || !strings.Contains(out, "calculator_divide") {
		t.Errorf("tools: printed %q, error %v; want the calculator's tools printed and only the failed upstreams named", out, err)
	}
}

// failedDoctor runs cmd, a doctor --json that must exit 1, and returns its
// findings by upstream.
func failedDoctor(t *testing.T, cmd *exec.Cmd, stdout, stderr *bytes.Buffer) map[string]checkup {
	t.Helper()
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("doctor: %v, want exit status 1\n%s", err, stderr.String())
	}
	var rep doctorReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("doctor --json printed %q: %v", stdout.String(), err)
	}
	got := map[string]checkup{}
	for _, c := range rep.Upstreams {
		got[c.Upstream] = c
	}
	return got
}

// doctor checks a profile without writing state: with no state yet (a
// fresh HOME and XDG_STATE_HOME), it creates no state file or folder.
func TestDoctorCreatesNoState(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	cfg := writeFile(t, dir, "p.yaml", calcProfile)
	out, _, err := runCLI(t, nil, "doctor", "--config", cfg, "--log-level", "error")
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	if !strings.Contains(out, "state: none yet") {
		t.Errorf("doctor printed %q, want it to say there is no state yet", out)
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && (strings.HasPrefix(d.Name(), state.FileName) || d.Name() == "mcp-router") {
			t.Errorf("doctor wrote %s", path)
		}
		return err
	})
}
