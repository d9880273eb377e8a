package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// yamlLine is the line yaml.v3 puts in a syntax error's message.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError is a YAML syntax error in the file:line: form. yaml.v3 often reports a line above
// the typo, so a tab or a mis-indented key that misplaced finds is named instead.
func syntaxError(file string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = err.Error()[len(m[0]):]
	}
	if at, why := misplaced(data); at > 0 {
		return fmt.Errorf("%s:%d: %s (YAML syntax: %s)", file, at, why, msg)
	}
	if line == 0 {
		return fmt.Errorf("%s: YAML syntax: %s", file, msg)
	}
	return fmt.Errorf("%s:%d: YAML syntax: %s (the typo may be on a line above)", file, line, msg)
}

// misplaced finds the first line indented by a tab, or dedented to a column no line above opened,
// and says what is wrong with it; 0 when there is none.
func misplaced(data []byte) (line int, why string) {
	levels := []int{0} // the indentations of the open blocks
	for i, l := range bytes.Split(data, []byte("\n")) {
		text := bytes.TrimLeft(l, " ")
		ind := len(l) - len(text)
		if len(text) > 0 && text[0] == '\t' {
			return i + 1, "a tab indents this line; YAML indents with spaces only"
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		closed := false
		for len(levels) > 1 && levels[len(levels)-1] > ind {
			levels, closed = levels[:len(levels)-1], true
		}
		if top := levels[len(levels)-1]; ind > top {
			if closed {
				return i + 1, "this line is indented to a column that no line above it opens: align it with the keys of its block"
			}
			levels = append(levels, ind)
		}
	}
	return 0, ""
}
