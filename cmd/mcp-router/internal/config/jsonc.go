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
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			comments = true
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			comments = true
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return out, comments // unclosed: the JSON parser reports the truncation
			}
			i += 2 + end + 1
		case c == '}' || c == ']':
			// A trailing comma, the last thing before it but space (comments are gone), is dropped.
			if j := len(bytes.TrimRight(out, " \t\r\n")); j > 0 && out[j-1] == ',' {
				out = append(out[:j-1], out[j:]...)
			}
			out = append(out, c)
		default:
			inString = c == '"'
			out = append(out, c)
		}
	}
	return out, comments
}
