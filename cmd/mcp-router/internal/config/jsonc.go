package config

import "bytes"

// JSONC turns JSON with comments and trailing commas (VS Code's and Cursor's files) into plain
// JSON, and reports whether there were comments, which a rewrite of the file loses.
func JSONC(data []byte) (out []byte, comments bool) {
	out = make([]byte, 0, len(data))
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			out = append(out, c)
			if c == '\\' && i+1 < len(data) {
				i++
				out = append(out, data[i])
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			comments = true
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i--
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			comments = true
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return out, comments // unclosed: the JSON parser reports the truncation
			}
			i += 2 + end + 1
		case c == ',' && closesNext(data[i+1:]):
			// a trailing comma: dropped
		default:
			out = append(out, c)
		}
	}
	return out, comments
}

// closesNext reports whether the next thing in data, past space and comments, is } or ].
func closesNext(data []byte) bool {
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return false
			}
			i += 2 + end + 1
		default:
			return c == '}' || c == ']'
		}
	}
	return false
}
