package upstream

import (
	"regexp"
	"slices"
	"strings"
)

// shownStderrLines is how many stderr lines a failed start shows.
const shownStderrLines = 5

// errorLine matches a line that says what went wrong.
var errorLine = regexp.MustCompile(`(?i)(^|[\s\[(])(\w*(error|exception)(\s*\[[^\]]*\])?:|cannot find|cannot access|could not|unable to|not found|no such file|enoent|eacces|eperm|enotempty|eexist|permission denied|panic:|fatal)`)

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
		explains := !noise.MatchString(l) && errorLine.MatchString(l)
		if (explains || tracebackEnd(lines, i)) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

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

// explainingLine is the one stderr line that best says why a start
// failed: the first that carries an error, else the last; "" for none.
func explainingLine(lines []string) string {
	if out := errorLines(lines, 1); len(out) > 0 {
		return out[0]
	}
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}
