package integrity

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Finding is one suspicious thing [Scan] found in a tool's contract.
type Finding struct {
	// Field says where: "name", "title", "description", "annotations.title",
	// a schema path such as "inputSchema.properties.path.description", a
	// schema key such as "inputSchema.properties.sidenote" (a parameter
	// name), or "contract" for the whole tool.
	Field string
	Kind  string // one of the Kind constants
	// Detail is what matched, with invisible characters written as <U+XXXX>
	// so it is safe to log.
	Detail string
}

// Kinds of finding.
const (
	// KindHiddenInstruction: text addressed to the model rather than
	// describing the tool (<IMPORTANT>, "ignore previous instructions", "do
	// not tell the user", "before using this tool, read ...").
	KindHiddenInstruction = "hidden_instruction"
	// KindInvisibleChars: zero-width, bidi-control or Unicode tag
	// characters, which hide text from a person reviewing the tool.
	KindInvisibleChars = "invisible_chars"
	// KindSecretReference: a credential file (~/.ssh, id_rsa, .env,
	// mcp.json, ...) or a secret ("private key", "api key", ...) that the
	// text tells the model to read, send or include.
	KindSecretReference = "secret_reference"
	// KindOversized: a text over [MaxText] or a contract over [MaxContract].
	KindOversized = "oversized"
	// KindShadowing: the text names a tool of another upstream, the way a
	// poisoned tool rewires how the model uses a trusted one.
	KindShadowing = "cross_server_shadowing"
)

// Size limits: far above any honest description, and large texts are where
// instructions hide.
const (
	MaxText     = 8 << 10  // bytes in one description, title or schema string
	MaxContract = 32 << 10 // bytes of the tool's canonical contract JSON
)

// Scan checks every text of t that a model reads: name, title,
// description, annotation title, and every key and string nested in the
// input and output schemas (parameter names, descriptions, titles, enums,
// defaults, $defs, ...). others are the names of other upstreams' tools, both
// exposed and upstream-own; a text naming one of them as a whole word is
// shadowing. Single plain words ("search", "fetch") are ignored in others,
// since honest descriptions use them as words.
//
// Scan reports at most one finding per field and kind; nil means clean.
func Scan(t mcp.Tool, others []string) []Finding {
	sc := &scanner{shadow: shadowPattern(others, t.Name), seen: make(map[[2]string]bool)}
	sc.name("name", t.Name)
	sc.text("title", t.Title)
	sc.text("description", t.Description)
	sc.text("annotations.title", t.Annotations.Title)
	sc.walk("inputSchema", schemaValue(t.RawInputSchema, mcp.ToolArgumentsSchema(t.InputSchema)))
	sc.walk("outputSchema", schemaValue(t.RawOutputSchema, mcp.ToolArgumentsSchema(t.OutputSchema)))
	if n := len(contractJSON(t)); n > MaxContract {
		sc.add("contract", KindOversized, fmt.Sprintf("%d bytes, limit %d", n, MaxContract))
	}
	return sc.findings
}

type scanner struct {
	shadow   *regexp.Regexp // nil when there is nothing to shadow
	seen     map[[2]string]bool
	findings []Finding
}

func (sc *scanner) add(field, kind, detail string) {
	key := [2]string{field, kind}
	if sc.seen[key] {
		return
	}
	sc.seen[key] = true
	sc.findings = append(sc.findings, Finding{Field: field, Kind: kind, Detail: detail})
}

// walk scans every key and string under v, in sorted key order so findings
// come out the same every time.
func (sc *scanner) walk(path string, v any) {
	switch v := v.(type) {
	case string:
		sc.text(path, v)
	case []any:
		for i, e := range v {
			sc.walk(fmt.Sprintf("%s[%d]", path, i), e)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := path + segment(k)
			sc.name(p, k)
			sc.walk(p, v[k])
		}
	}
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_$-]+$`)

func segment(k string) string {
	if plainKey.MatchString(k) {
		return "." + k
	}
	return `["` + visible(k) + `"]`
}

// name scans an identifier: a tool name, parameter name or schema key.
// Words are split at _, - and camelCase so an instruction spelled as an
// identifier reads as one.
func (sc *scanner) name(field, s string) {
	sc.common(field, s, splitIdentifier(s))
}

// text scans prose.
func (sc *scanner) text(field, s string) {
	if s == "" {
		return
	}
	sc.common(field, s, s)
	if len(s) > MaxText {
		sc.add(field, KindOversized, fmt.Sprintf("%d bytes, limit %d", len(s), MaxText))
	}
	if sc.shadow != nil {
		if m := sc.shadow.FindStringSubmatch(stripInvisible(s)); m != nil {
			sc.add(field, KindShadowing, fmt.Sprintf("names %q, a tool of another server", m[1]))
		}
	}
}

// common runs the checks names and prose share; words is s as prose.
func (sc *scanner) common(field, s, words string) {
	if inv := invisibles(s); inv.count > 0 {
		sc.add(field, KindInvisibleChars, inv.detail())
		if inv.tags != "" {
			sc.instructions(field, inv.tags, inv.tags, " (hidden in tag characters)")
		}
	}
	clean := stripInvisible(s)
	sc.instructions(field, clean, stripInvisible(words), "")
}

// instructions looks for hidden instructions and secret references in raw
// (for paths and file names) and words (for phrases).
func (sc *scanner) instructions(field, raw, words, where string) {
	phrase := phraseForm(words)
	if m := matchAny(hiddenInstruction, phrase); m != "" {
		sc.add(field, KindHiddenInstruction, fmt.Sprintf("%q%s", excerpt(m), where))
	}
	if m := matchAny(secretFile, strings.ToLower(raw)); m != "" {
		sc.add(field, KindSecretReference, fmt.Sprintf("%q%s", excerpt(strings.TrimSpace(m)), where))
	} else if m := matchSecretUse(phrase); m != "" {
		sc.add(field, KindSecretReference, fmt.Sprintf("%q%s", excerpt(m), where))
	}
}

func matchAny(patterns []*regexp.Regexp, s string) string {
	for _, re := range patterns {
		if m := re.FindString(s); m != "" {
			return m
		}
	}
	return ""
}

// phraseForm lower-cases s, reads _ and - as spaces and collapses runs of
// white space, so markers match however they are spaced.
func phraseForm(s string) string {
	s = strings.ToLower(s)
	s = strings.NewReplacer("_", " ", "-", " ", "\u2019", "'").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// splitIdentifier inserts a space at each lower-to-upper case change:
// contentFromReadingSshKey → content From Reading Ssh Key.
func splitIdentifier(s string) string {
	var b strings.Builder
	var prev rune
	for _, r := range s {
		if prev >= 'a' && prev <= 'z' && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// Markers of text addressed to the model, matched against phraseForm.
var hiddenInstruction = compileAll(
	// <IMPORTANT>, </system>, < instructions >, and Llama's [INST].
	`< ?/? ?(important|system|sys|instructions?|hidden|critical|admin)\b[^<>]{0,40}>`,
	`\[ ?/? ?(inst|system|instructions?) ?\]`,
	`<!--`,
	`\b(ignore|disregard|forget|override)( (all|any|the|your|of))* (previous|prior|above|earlier|preceding|former|other|system|existing)( \w+)? (instructions?|prompts?|messages?|rules|directions|directives|context|guidelines)\b`,
	`\b(do not|don't|dont|never) (tell|inform|notify|alert|mention|warn)\b`,
	`\b(do not|don't|dont|never) (reveal|disclose|show|share|say)\b.{0,60}\b(user|human|person)\b`,
	`\bwithout (telling|informing|notifying|alerting|asking|warning) (the|your) (user|human)\b`,
	`\b(hide|conceal|keep) (this|it|that)( secret)? from (the|your) (user|human)\b`,
	`\b(do not|don't|dont|never) (ask|wait) (for )?(the )?(user'?s? )?(for )?(permission|confirmation|approval|consent)\b`,
	`\bbefore (using|calling|invoking|running|executing|you use|you call|any use of) (this|the|any) tool\b.{0,80}?\b(read|open|cat|load|access|fetch|send|include|pass|provide|upload|attach|extract|retrieve|copy|collect)\b`,
	`\byou (must|need to|have to) first\b`,
	`\botherwise,? (the |this )?(tool|function|server) (will|would|does|may) (not work|fail|break|crash|refuse)`,
	`\bwhen this tool is (available|present|installed|loaded|enabled|connected)\b`,
	`\b(ignore|reveal|print|output|repeat|leak|send|include) (your|the) (system prompt|hidden instructions)\b`,
	`\b(new|updated|real|secret|hidden) (system )?instructions? ?:`,
)

// Credential files, matched against the lower-cased raw text.
var secretFile = compileAll(
	`~/?\.ssh\b`,
	`(^|[^a-z0-9.])\.ssh/`,
	`(^|[^a-z0-9])id_(rsa|dsa|ecdsa|ed25519)\b`,
	`(^|[\s'"\x60(/~=:])\.env(\.[a-z]+)?\b`,
	`\bmcp\.json\b`,
	`\bclaude_desktop_config\.json\b`,
	`\.aws/credentials\b`,
	`/etc/(passwd|shadow)\b`,
	`\.git-credentials\b`,
	`\.netrc\b`,
)

// A secret together with an imperative verb, matched against phraseForm.
// The verb must be imperative (read, send), not descriptive (reads,
// sends), passive (is read) or negated (never send): honest descriptions
// say what the tool does or forbids, poisoned ones tell the model what to
// do. The group "pre" catches the word before the verb for that test.
var secretUse = compileAll(
	`\b(?:(?P<pre>is|are|was|were|be|been|being|get|gets|got|not|never|no|don't|dont|cannot|can't) )?(send|include|read|pass|provide|upload|forward|attach|append|exfiltrate|post|paste|share|leak|copy|cat|embed|extract|collect|dump)\b[^.;!?\n]{0,60}\b(private keys?|api keys?|secret keys?|access tokens?|auth tokens?|bearer tokens?|passwords?|credentials|ssh keys?|seed phrases?|mnemonics?|session cookies?)\b`,
	`\b(private keys?|api keys?|secret keys?|access tokens?|passwords?|credentials|ssh keys?|seed phrases?)\b[^.;!?\n]{0,30}\b(must|should|needs? to) be (sent|included|passed|provided|uploaded|forwarded|attached|appended|copied)\b`,
)

// matchSecretUse is the first secretUse match whose verb is neither
// passive nor negated.
func matchSecretUse(phrase string) string {
	for _, re := range secretUse {
		pre := re.SubexpIndex("pre")
		for _, m := range re.FindAllStringSubmatchIndex(phrase, -1) {
			if pre < 0 || m[2*pre] < 0 {
				return phrase[m[0]:m[1]]
			}
		}
	}
	return ""
}

func compileAll(exprs ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		out[i] = regexp.MustCompile(e)
	}
	return out
}

// shadowPattern matches, case-insensitively and as a whole identifier, any
// name in others that looks like a tool name rather than an English word.
// self, the scanned tool's own name, is left out.
func shadowPattern(others []string, self string) *regexp.Regexp {
	var alts []string
	seen := make(map[string]bool)
	for _, n := range others {
		k := strings.ToLower(n)
		if seen[k] || k == strings.ToLower(self) || !identifierLike(n) {
			continue
		}
		seen[k] = true
		alts = append(alts, regexp.QuoteMeta(k))
	}
	if len(alts) == 0 {
		return nil
	}
	// Longest first, so send_email_v2 wins over send_email.
	slices.SortFunc(alts, func(a, b string) int { return len(b) - len(a) })
	return regexp.MustCompile(`(?i)(?:^|[^a-z0-9_-])(` + strings.Join(alts, "|") + `)(?:$|[^a-z0-9_-])`)
}

// identifierLike reports whether a name has _, -, ., a digit or a
// camelCase change: send_email, sendEmail, gmail.send, but not search.
func identifierLike(name string) bool {
	if len(name) < 3 {
		return false
	}
	var prev rune
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || (r >= '0' && r <= '9'):
			return true
		case prev >= 'a' && prev <= 'z' && r >= 'A' && r <= 'Z':
			return true
		}
		prev = r
	}
	return false
}

// invisible reports whether r hides text: zero-width and directional marks
// (U+200B–U+200F), bidi embeddings and overrides (U+202A–U+202E), word
// joiner and invisible operators (U+2060–U+2064), bidi isolates
// (U+2066–U+2069), the byte-order mark and tag characters
// (U+E0000–U+E007F).
func invisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069,
		r == 0xFEFF, r >= 0xE0000 && r <= 0xE007F:
		return true
	}
	return false
}

type invisibleChars struct {
	count int
	runes []rune // distinct, in order of appearance, at most 5
	tags  string // what the tag characters spell in ASCII
}

// invisibles collects the invisible characters of s. A byte-order mark at
// the very start is an encoding artefact, not hidden text, and is allowed.
func invisibles(s string) invisibleChars {
	var inv invisibleChars
	var tags strings.Builder
	for i, r := range s {
		if !invisible(r) || (i == 0 && r == 0xFEFF) {
			continue
		}
		inv.count++
		if len(inv.runes) < 5 && !slices.Contains(inv.runes, r) {
			inv.runes = append(inv.runes, r)
		}
		if r >= 0xE0020 && r <= 0xE007E {
			tags.WriteRune(r - 0xE0000)
		}
	}
	inv.tags = tags.String()
	return inv
}

func (inv invisibleChars) detail() string {
	cps := make([]string, len(inv.runes))
	for i, r := range inv.runes {
		cps[i] = fmt.Sprintf("U+%04X", r)
	}
	d := fmt.Sprintf("%d invisible characters (%s)", inv.count, strings.Join(cps, ", "))
	if inv.tags != "" {
		d += fmt.Sprintf(", tag characters spell %q", excerpt(inv.tags))
	}
	return d
}

func stripInvisible(s string) string {
	if !strings.ContainsFunc(s, invisible) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s)
}

// visible writes invisible and control characters as <U+XXXX>, so text
// from an upstream is safe to print in a log line or terminal.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		case invisible(r) || r < 0x20 || (r >= 0x7F && r < 0xA0):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// excerptRunes is how much of a text pins and findings keep.
const excerptRunes = 160

// excerpt is the start of s, made visible.
func excerpt(s string) string {
	n := 0
	for i := range s {
		if n == excerptRunes {
			return visible(s[:i]) + "…"
		}
		n++
	}
	return visible(s)
}
