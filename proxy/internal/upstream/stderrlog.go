package upstream

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// stderrLog copies the stderr of an upstream's children into the log, one
// record per line, across restarts: a crash-looping child's repeated
// output (compared with digits masked) is logged once, then "same output
// as before" at 1, 2, 4, 8... repeats. A run's lines are held back only
// while they match the previous run's.
type stderrLog struct {
	logger *slog.Logger

	mu      sync.Mutex
	prev    []string // the last run's lines, masked; nil: none, or too long to compare
	repeats int      // runs in a row that printed prev
}

// maxCompared bounds the output remembered from one run.
const maxCompared = 64 << 10

func newStderrLog(logger *slog.Logger) *stderrLog { return &stderrLog{logger: logger} }

// copy logs one run's stderr, and gives each line to tail, until EOF. A
// line longer than maxLogLine is cut and the rest dropped, so a chatty
// child never blocks on a full pipe.
func (s *stderrLog) copy(r io.ReadCloser, tail *lineTail) {
	defer r.Close()
	defer tail.close()
	s.mu.Lock()
	prev := s.prev
	s.mu.Unlock()
	run := stderrRun{log: s.logger, prev: prev, matching: prev != nil}
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, err := br.ReadSlice('\n')
		if text := strings.TrimRight(string(line), "\r\n"); text != "" {
			run.line(text)
			tail.add(text)
		}
		for err == bufio.ErrBufferFull {
			_, err = br.ReadSlice('\n')
		}
		if err != nil {
			break
		}
	}
	s.end(&run)
}

// end logs what the run held back, or that it repeated the previous one.
func (s *stderrLog) end(run *stderrRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	same := run.matching && len(run.masked) == len(run.prev) && len(run.masked) > 0
	if same {
		s.repeats++
		if s.repeats&(s.repeats-1) == 0 { // a power of two
			s.logger.Info("upstream stderr: same output as before", "lines", len(run.masked), "times", s.repeats)
		}
		return
	}
	run.flush()
	s.repeats = 0
	s.prev = run.masked
	if run.tooLong {
		s.prev = nil
	}
}

// stderrRun is one child's stderr being copied.
type stderrRun struct {
	log      *slog.Logger
	prev     []string // the previous run's masked lines
	matching bool     // every line so far equals prev's line at its index
	held     []string // lines not logged yet, while matching
	masked   []string
	size     int
	tooLong  bool
}

func (r *stderrRun) line(text string) {
	key := maskDigits(text)
	if !r.tooLong {
		r.masked = append(r.masked, key)
		r.size += len(key)
		if r.size > maxCompared {
			r.tooLong, r.masked = true, nil
		}
	}
	if r.matching {
		if i := len(r.held); i < len(r.prev) && r.prev[i] == key && !r.tooLong {
			r.held = append(r.held, text)
			return
		}
		r.flush()
	}
	logLine(r.log, text)
}

// flush logs the held lines and stops matching.
func (r *stderrRun) flush() {
	r.matching = false
	for _, h := range r.held {
		logLine(r.log, h)
	}
	r.held = nil
}

// logLine logs one line of a child's stderr at INFO, but npm's notices
// (about npm, not the upstream) at DEBUG.
func logLine(log *slog.Logger, text string) {
	level := slog.LevelInfo
	if strings.HasPrefix(text, "npm notice") {
		level = slog.LevelDebug
	}
	log.Log(context.Background(), level, "upstream stderr", "line", text)
}

var digitRuns = regexp.MustCompile(`[0-9]+`)

// maskDigits replaces each run of digits with one '#'.
func maskDigits(s string) string { return digitRuns.ReplaceAllLiteralString(s, "#") }

// shownStderrLines is how many stderr lines a failed start shows.
const shownStderrLines = 5

// errorLine matches a line that says what went wrong.
var errorLine = regexp.MustCompile(`(?i)(^|[\s\[(])(\w*(error|exception)(\s*\[[^\]]*\])?:|cannot find|cannot access|cannot connect|could not|error response|unable to|not found|no such file|enoent|eacces|eperm|enotempty|eexist|permission denied|panic:|fatal)`)

// noise matches lines that name an error without explaining it: stack
// frames, code excerpts, npm's details and warnings.
var noise = regexp.MustCompile(`^\s+(at |File "|\^|throw |raise |goroutine |\S+\.go:\d+)|^\s*\^+\s*$|^npm (error|ERR!) (code|syscall|errno|path|dest|A complete log) |^npm (warn|WARN) `)

// explainingStderr returns the first shownStderrLines lines of a failed
// start's stderr that carry an error, else its last ones: a crashed
// process's last lines are seldom its reason (a stack, "Node.js v20").
func explainingStderr(lines []string) []string {
	if out := errorLines(lines, shownStderrLines); len(out) > 0 {
		return out
	}
	return lines[max(0, len(lines)-shownStderrLines):]
}

// errorLines returns the first n distinct lines of lines that carry an
// error.
func errorLines(lines []string, n int) []string {
	var out []string
	for i, l := range lines {
		if len(out) == n {
			break
		}
		if (explains(l) || tracebackEnd(lines, i)) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// explains reports whether l carries an error and is not noise.
func explains(l string) bool { return !noise.MatchString(l) && errorLine.MatchString(l) }

// tracebackEnd reports whether lines[i] is the line that ends a Python
// traceback.
func tracebackEnd(lines []string, i int) bool {
	l := lines[i]
	if l == "" || l[0] == ' ' || l[0] == '\t' || strings.HasPrefix(l, "Traceback ") {
		return false
	}
	for j := i - 1; j >= 0; j-- {
		switch prev := lines[j]; {
		case strings.HasPrefix(prev, "Traceback (most recent call last)"):
			return true
		case prev == "" || (prev[0] != ' ' && prev[0] != '\t'):
			return false
		}
	}
	return false
}

// errorOpening matches a line that opens as an error report does:
// "Error: ", "TypeError: ", Node's "Error [ERR_...]: ", "[Error: ...]"
// and "Uncaught ...", "error: ", "ERROR:", "fatal: ", "panic: ",
// "npm error ", each perhaps after its program's name ("docker: Error response").
var errorOpening = regexp.MustCompile(`^\s*(\w+: )?\[?([\w.]*(Error|Exception)\b|(?i:error|fatal|panic|uncaught)\b|npm (error|ERR!) )`)

// explainingLine is the one stderr line that best says why a child
// failed: its reasonLine, else the last; "" for none.
func explainingLine(lines []string) string {
	if l := reasonLine(lines); l != "" || len(lines) == 0 {
		return l
	}
	return lines[len(lines)-1]
}

// reasonLine is the first line that carries an error and opens as one
// does (or ends a Python traceback), so an error outranks a warning
// before it; else the first that carries an error; "" for none.
func reasonLine(lines []string) string {
	first := ""
	for i, l := range lines {
		if explains(l) && errorOpening.MatchString(l) || tracebackEnd(lines, i) {
			return l
		}
		if first == "" && explains(l) {
			first = l
		}
	}
	return first
}
