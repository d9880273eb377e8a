package wire

// A single-pass JSON scanner for the pre-check: it checks that a message
// is one JSON value no deeper than a limit and keeps the members of a
// top-level object, without decoding anything.

import (
	"bytes"
	"errors"
	"fmt"
)

// maxJSONDepth is the deepest nesting a client message may have (BI-08 in
// docs/reliability.md); tools/call arguments may nest about 60 levels.
const maxJSONDepth = 64

var errTooDeep = fmt.Errorf("JSON nested deeper than %d levels", maxJSONDepth)

// jsonMember is one member of a top-level object: its raw name token (quoted) and its raw value.
type jsonMember struct {
	name, value []byte
}

// maxMembers bounds the top-level members kept: those whose names could be
// JSON-RPC's. A JSON-RPC message has at most four.
const maxMembers = 8

// jsonScan is what scanJSON learns about a message.
type jsonScan struct {
	top     byte // first byte of the value: '{', '[', '"', 't', 'f', 'n' or a number's
	members [maxMembers]jsonMember
	n       int  // members kept, or that would have been
	escaped bool // a kept member name contains an escape

	// want, when set, is one more member name to look for; found is the
	// value of its last occurrence.
	want   string
	found  []byte
	unsure bool // a member name has escapes, or is want in another case
}

func (s *jsonScan) kept() []jsonMember { return s.members[:min(s.n, maxMembers)] }

// jsonScanner walks JSON bytes once, without recursion: containers is a
// bit stack (bit d set when depth d+1 is an object), hence maxJSONDepth <= 64.
type jsonScanner struct {
	b          []byte
	i          int
	depth      int
	containers uint64
}

// Scan states: where the scanner is in the grammar.
const (
	scanValue = iota // a value starts here
	scanName         // an object member's name starts here
	scanAfter        // a value just ended: ',', a closing bracket or the end
)

// scanJSON checks that b is exactly one JSON value, as encoding/json
// accepts it, nested at most maxJSONDepth deep, and returns its top-level
// members.
func scanJSON(b []byte) (jsonScan, error) {
	return scanJSONFor(b, "")
}

// scanMember returns the raw value of the last top-level member named
// want, as encoding/json decodes an object into a map. unsure is set when a
// name has escapes or spells want in another case: decode b instead.
func scanMember(b []byte, want string) (value []byte, unsure bool, err error) {
	sc, err := scanJSONFor(b, want)
	return sc.found, sc.unsure, err
}

func scanJSONFor(b []byte, want string) (jsonScan, error) {
	out := jsonScan{want: want}
	s := jsonScanner{b: b}
	s.skipSpace()
	if s.i == len(b) {
		return out, errors.New("empty message")
	}
	out.top = b[s.i]
	state, name, valueStart := scanValue, []byte(nil), -1
	for {
		s.skipSpace()
		if s.i == len(b) {
			if state == scanAfter && s.depth == 0 {
				return out, nil
			}
			return out, fmt.Errorf("unexpected end of JSON at offset %d", s.i)
		}
		if state == scanAfter && s.depth == 0 {
			return out, fmt.Errorf("data after the JSON value at offset %d", s.i)
		}
		var err error
		switch state {
		case scanValue:
			if s.depth == 1 && s.inObject() {
				valueStart = s.i
			}
			state, err = s.value()
		case scanName:
			var n []byte
			if n, err = s.name(); s.depth == 1 {
				name = n
			}
			state = scanValue
		case scanAfter:
			state, err = s.next()
		}
		if err != nil {
			return out, err
		}
		if state == scanAfter && s.depth == 1 && s.inObject() && valueStart >= 0 {
			out.add(name, b[valueStart:s.i])
			valueStart = -1
		}
		if state == scanValue && s.depth == 1 {
			valueStart = -1 // an array element, or before a name: not a member value
		}
	}
}

// add keeps a top-level member whose name could be JSON-RPC's: one of them
// in any case, or a name with escapes or non-ASCII letters, which
// encoding/json may fold into one ("\u0069d", "j\u017fonrpc").
func (out *jsonScan) add(name, value []byte) {
	escaped := bytes.IndexByte(name, '\\') >= 0
	if out.want != "" {
		switch bare := name[1 : len(name)-1]; {
		case escaped:
			out.unsure = true
		case string(bare) == out.want:
			// encoding/json merges a name given twice: too subtle to follow.
			out.unsure = out.unsure || out.found != nil
			out.found = value
		case !isASCII(bare) || equalFoldASCII(bare, out.want):
			out.unsure = true
		}
	}
	if !escaped && !envelopeLike(name[1:len(name)-1]) && isASCII(name) {
		return
	}
	if out.n < maxMembers {
		out.members[out.n] = jsonMember{name, value}
		out.escaped = out.escaped || escaped
	}
	out.n++
}

func (s *jsonScanner) inObject() bool { return s.containers&(1<<(s.depth-1)) != 0 }

func (s *jsonScanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value, or opens a container.
func (s *jsonScanner) value() (int, error) {
	switch c := s.b[s.i]; {
	case c == '{' || c == '[':
		return s.open(c == '{')
	case c == '"':
		_, err := s.str()
		return scanAfter, err
	case c == 't':
		return scanAfter, s.literal("true")
	case c == 'f':
		return scanAfter, s.literal("false")
	case c == 'n':
		return scanAfter, s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return scanAfter, s.number()
	default:
		return 0, s.unexpected("looking for a value")
	}
}

// open enters an object or array; an empty one is closed at once.
func (s *jsonScanner) open(object bool) (int, error) {
	if s.depth == maxJSONDepth {
		return 0, errTooDeep
	}
	s.containers &^= 1 << s.depth
	if object {
		s.containers |= 1 << s.depth
	}
	s.depth++
	s.i++
	s.skipSpace()
	closing := byte(']')
	if object {
		closing = '}'
	}
	if s.i < len(s.b) && s.b[s.i] == closing {
		s.i++
		s.depth--
		return scanAfter, nil
	}
	if object {
		return scanName, nil
	}
	return scanValue, nil
}

// next reads what follows a value inside a container.
func (s *jsonScanner) next() (int, error) {
	c := s.b[s.i]
	object := s.inObject()
	switch {
	case c == ',':
		s.i++
		if object {
			return scanName, nil
		}
		return scanValue, nil
	case (c == '}' && object) || (c == ']' && !object):
		s.i++
		s.depth--
		return scanAfter, nil
	}
	return 0, s.unexpected("after a value")
}

// name reads an object member's name and the colon after it.
func (s *jsonScanner) name() ([]byte, error) {
	if s.b[s.i] != '"' {
		return nil, s.unexpected("looking for a member name")
	}
	start := s.i
	if _, err := s.str(); err != nil {
		return nil, err
	}
	name := s.b[start:s.i]
	s.skipSpace()
	if s.i == len(s.b) || s.b[s.i] != ':' {
		return nil, s.unexpected("after a member name")
	}
	s.i++
	return name, nil
}

// str scans a string token and reports whether it has escapes.
func (s *jsonScanner) str() (escaped bool, err error) {
	s.i++
	for s.i < len(s.b) {
		i, b := s.i, s.b
		for i < len(b) && plainInString[b[i]] {
			i++
		}
		if s.i = i; i == len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			s.i++
			return escaped, nil
		case c == '\\':
			escaped = true
			if err := s.escape(); err != nil {
				return escaped, err
			}
			continue
		case c < 0x20:
			return escaped, fmt.Errorf("control character %#02x in a string at offset %d", c, s.i)
		}
		s.i++
	}
	return escaped, fmt.Errorf("unterminated string at offset %d", s.i)
}

// plainInString marks the bytes a string holds as they are.
var plainInString = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

func (s *jsonScanner) escape() error {
	s.i++
	if s.i == len(s.b) {
		return fmt.Errorf("unterminated string at offset %d", s.i)
	}
	switch s.b[s.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i++
		return nil
	case 'u':
		s.i++
		for range 4 {
			if s.i == len(s.b) || !isHex(s.b[s.i]) {
				return fmt.Errorf("bad \\u escape at offset %d", s.i)
			}
			s.i++
		}
		return nil
	}
	return fmt.Errorf("bad escape at offset %d", s.i)
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func (s *jsonScanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.unexpected("in a literal")
	}
	s.i += len(word)
	return nil
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() error {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return s.unexpected("in a number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return s.unexpected("after a decimal point")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return s.unexpected("in an exponent")
		}
	}
	return nil
}

func (s *jsonScanner) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

func (s *jsonScanner) unexpected(where string) error {
	if s.i == len(s.b) {
		return fmt.Errorf("unexpected end of JSON %s", where)
	}
	return fmt.Errorf("unexpected %q at offset %d %s", s.b[s.i], s.i, where)
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
