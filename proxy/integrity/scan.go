package integrity

import (
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-router/mcp-router/internal/clip"
)

// Finding is one suspicious thing [Scan] found in a tool's contract.
type Finding struct {
	// Field says where: "name", "description", a schema path such as
	// "inputSchema.properties.path.description", or "contract".
	Field string
	Kind  string // one of the Kind constants
	// Detail is what matched, with invisible characters written as <U+XXXX>.
	Detail string
}

// Kinds of finding.
const (
	// KindHiddenInstruction: text addressed to the model (<IMPORTANT>,
	// "ignore previous instructions", "do not tell the user").
	KindHiddenInstruction = "hidden_instruction"
	// KindInvisibleChars: zero-width, bidi-control or Unicode tag characters.
	KindInvisibleChars = "invisible_chars"
	// KindSecretReference: a credential file (~/.ssh, .env, mcp.json) or a
	// secret that the text tells the model to read, send or include.
	KindSecretReference = "secret_reference"
	// KindOversized: a text over [MaxText] or a contract over [MaxContract].
	KindOversized = "oversized"
	// KindShadowing: the text names a tool of another upstream.
	KindShadowing = "cross_server_shadowing"
)

// Size limits: far above any honest description.
const (
	MaxText     = 8 << 10  // bytes in one description, title or schema string
	MaxContract = 32 << 10 // bytes of the tool's canonical contract JSON
)

// maxScan is how much of one text Scan reads, so an upstream cannot stall it.
const maxScan = 8 * MaxText

// Scan checks every text of t that a model reads: name, title,
// description, annotation title, and every key and string in the schemas.
// others are the names of other upstreams' tools; a text naming one as a
// whole word (single plain words such as "search" aside) is shadowing.
// It reports at most one finding per field and kind, at most 32 in all;
// nil means clean.
func Scan(t mcp.Tool, others []string) []Finding { return scan(t, shadowSet(others, t.Name)) }

// Named reports whether a tool of another server is named name, ignoring
// case when fold: the lookup [Contract.Scan] uses in place of a list.
type Named func(name string, fold bool) bool

func scan(t mcp.Tool, shadow shadowNames) []Finding {
	return scanDecoded(t, schemaValue(t.RawInputSchema, mcp.ToolArgumentsSchema(t.InputSchema)),
		schemaValue(t.RawOutputSchema, mcp.ToolArgumentsSchema(t.OutputSchema)), len(contractJSON(t)), shadow)
}

// scanDecoded is scan of t with its schemas decoded and its contract size.
func scanDecoded(t mcp.Tool, in, out any, size int, shadow shadowNames) []Finding {
	sc := &scanner{shadow: shadow}
	sc.name("name", t.Name)
	sc.text("title", t.Title)
	sc.text("description", t.Description)
	sc.text("annotations.title", t.Annotations.Title)
	sc.walk("inputSchema", in)
	sc.walk("outputSchema", out)
	if size > MaxContract {
		sc.add("contract", KindOversized, fmt.Sprintf("%d bytes, limit %d", size, MaxContract))
	}
	return sc.findings
}

// ScanEntry checks the texts a model reads of a listed [mcp.Resource],
// [mcp.ResourceTemplate] or [mcp.Prompt] as [Scan] checks a tool's: its
// name, title and description, and a prompt's arguments. A resource's
// name is often its file's (".env"), so it is not read for references to
// secret files. Any other value is clean.
func ScanEntry(v any) []Finding {
	sc := &scanner{}
	switch v := v.(type) {
	case mcp.Resource:
		sc.resource(v.Name, v.Title, v.Description)
	case mcp.ResourceTemplate:
		sc.resource(v.Name, v.Title, v.Description)
	case mcp.Prompt:
		sc.name("name", v.Name)
		sc.text("title", v.Title)
		sc.text("description", v.Description)
		for i, a := range v.Arguments {
			at := "arguments[" + strconv.Itoa(i) + "]."
			sc.name(at+"name", a.Name)
			sc.text(at+"title", a.Title)
			sc.text(at+"description", a.Description)
		}
	}
	return sc.findings
}

// resource scans a resource's or template's texts.
func (sc *scanner) resource(name, title, description string) {
	sc.text("name", name)
	sc.findings = slices.DeleteFunc(sc.findings, func(f Finding) bool { return f.Kind == KindSecretReference })
	sc.text("title", title)
	sc.text("description", description)
}

type scanner struct {
	shadow   shadowNames
	findings []Finding
	at       []byte // the path walkAs is at, written out only for a finding
}

// maxFindings bounds what one tool can put in the log.
const maxFindings = 32

// add notes a finding in field; "" is the path walkAs is at.
func (sc *scanner) add(field, kind, detail string) {
	if field == "" {
		field = string(sc.at)
	}
	if len(sc.findings) < maxFindings && !slices.ContainsFunc(sc.findings, func(f Finding) bool { return f.Field == field && f.Kind == kind }) {
		sc.findings = append(sc.findings, Finding{Field: field, Kind: kind, Detail: detail})
	}
}

// walk scans every key and string under v in sorted key order.
func (sc *scanner) walk(path string, v any) {
	sc.at = append(sc.at[:0], path...)
	sc.walkAs(v, false, 0)
}

// walkAs scans v, at sc.at, its strings as names or as prose.
func (sc *scanner) walkAs(v any, asName bool, depth int) {
	if depth > maxDepth {
		sc.add("", KindOversized, fmt.Sprintf("nested deeper than %d levels", maxDepth))
		return
	}
	n := len(sc.at)
	switch v := v.(type) {
	case string:
		if asName {
			sc.name("", v)
		} else {
			sc.text("", v)
		}
	case []any:
		for i, e := range v {
			sc.at = append(strconv.AppendInt(append(sc.at[:n], '['), int64(i), 10), ']')
			sc.walkAs(e, asName, depth+1)
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			sc.at = appendSegment(sc.at[:n], k)
			sc.name("", k)
			sc.walkAs(v[k], identifierKeywords[k], depth+1)
		}
	}
	sc.at = sc.at[:n]
}

// sortedKeys is m's keys in order, in one allocation (slices.Sorted
// grows its slice as it goes: about a fifth of vetting's allocations).
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// maxDepth bounds how deep Scan walks a schema.
const maxDepth = 64

// identifierKeywords are the JSON Schema keywords whose strings are not prose.
var identifierKeywords = map[string]bool{
	"required": true, "$ref": true, "$id": true, "$schema": true, "$anchor": true,
	"$dynamicRef": true, "type": true, "format": true, "pattern": true,
	"contentEncoding": true, "contentMediaType": true,
}

// appendSegment appends key k to a path: .k, or ["k"] when k is not plain.
func appendSegment(path []byte, k string) []byte {
	if k != "" && !strings.ContainsFunc(k, notPlainKey) {
		return append(append(path, '.'), k...)
	}
	return append(append(append(path, `["`...), visible(k)...), `"]`...)
}

// notPlainKey reports what a key written .key may not hold.
func notPlainKey(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '$' || r == '-')
}

// name scans an identifier (a tool, parameter or key name), split at _,
// - and camelCase so an instruction spelled as one reads as words.
func (sc *scanner) name(field, s string) {
	s = sc.bound(field, s)
	sc.common(field, s, splitIdentifier(s))
}

// text scans prose.
func (sc *scanner) text(field, s string) {
	if s == "" {
		return
	}
	s = sc.bound(field, s)
	plain := sc.common(field, s, s)
	if !sc.shadow.empty() {
		if m := shadowed(plain, sc.shadow); m != "" {
			sc.add(field, KindShadowing, fmt.Sprintf("names %q, a tool of another server", m))
		}
	}
}

// bound reports s over MaxText and returns what of it is scanned.
func (sc *scanner) bound(field, s string) string {
	if len(s) > MaxText {
		sc.add(field, KindOversized, fmt.Sprintf("%d bytes, limit %d", len(s), MaxText))
	}
	return clip.Prefix(s, maxScan)
}

// common runs the checks names and prose share; words is s as prose,
// with the same invisible characters. It returns s without them.
func (sc *scanner) common(field, s, words string) string {
	inv := invisibles(s)
	if inv.count > 0 {
		sc.add(field, KindInvisibleChars, inv.detail())
		if inv.tags != "" {
			sc.instructions(field, inv.tags, inv.tags, " (hidden in tag characters)")
		}
	}
	if inv.any {
		s, words = strip(s, invisible), strip(words, invisible)
	}
	sc.instructions(field, s, words, "")
	return s
}

// instructions looks for hidden instructions and secret references.
func (sc *scanner) instructions(field, raw, words, where string) {
	words = phrase(words)
	if m := hiddenInstruction.find(words); m != "" {
		sc.add(field, KindHiddenInstruction, fmt.Sprintf("%q%s", excerpt(m), where))
	}
	m := strings.TrimSpace(secretFile.find(strings.ToLower(raw)))
	if m == "" {
		m = secretWords.find(words)
	}
	if m == "" {
		m = matchSecretUse(words)
	}
	if m != "" {
		sc.add(field, KindSecretReference, fmt.Sprintf("%q%s", excerpt(m), where))
	}
}

// splitIdentifier inserts a space at each lower-to-upper case change:
// contentFromReadingSshKey → content From Reading Ssh Key.
func splitIdentifier(s string) string {
	if !identifierLike(s) {
		return s // no case change: most keys, and no copy of them
	}
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

// Markers of text addressed to the model, matched against phrase.
var hiddenInstruction = anyOf([]string{"<", "[", "ignore", "disregard", "forget", "override",
	"do not", "don't", "dont", "never", "without", "hide", "conceal", "keep", "before",
	"you must", "you need", "you have", "otherwise", "when this tool", "system prompt",
	"hidden instructions", "instruction"},
	// <IMPORTANT>, </system>, < instructions >, and Llama's [INST].
	`< ?/? ?(important|system|sys|instructions?|hidden|critical|admin)\b[^<>]{0,40}>`,
	`\[ ?/? ?(inst|system|instructions?) ?\]`,
	`<!--`,
	`\b(ignore|disregard|forget|override)( (all|any|the|your|of))* (previous|prior|above|earlier|preceding|former|other|system|existing)( \w+)? (instructions?|prompts?|messages?|rules|directions|directives|context|guidelines)\b`,
	`\b(do not|don't|dont|never) (tell|inform|notify|alert|mention)\b`,
	`\b(do not|don't|dont|never) (reveal|disclose|show|share|say)\b.{0,60}\b(user|human|person)\b`,
	`\bwithout (telling|informing|notifying|alerting|asking|warning) (the|your) (user|human)\b`,
	`\b(hide|conceal|keep) (this|it|that)( secret)? from (the|your) (user|human)\b`,
	`\b(do not|don't|dont|never) (ask|wait) (for )?(the )?(user'?s? )?(for )?(permission|confirmation|approval|consent)\b`,
	`\bbefore (using|calling|invoking|running|executing|you use|you call|any use of) (this|the|any) tool\b.{0,80}?\b(read|open|cat|load|access|fetch|send|include|pass|provide|upload|attach|extract|retrieve|copy|collect)\b`,
	`\byou (must|need to|have to) first\b`,
	`\botherwise,? (the |this )?(tool|function|server) (will|would) not work\b`,
	`\bwhen this tool is (available|present|installed|loaded|enabled|connected)\b`,
	`\b(ignore|reveal|print|output|repeat|leak|send|include) (your|the) (system prompt|hidden instructions)\b`,
	`\b(new|updated|real|secret|hidden) (system )?instructions? ?:`,
)

// Credential files, matched against the lower-cased raw text.
var secretFile = anyOf([]string{".ssh", "id_", ".env", "mcp.json", "claude_desktop_config",
	".aws", "/etc/", ".git-credentials", ".netrc"},
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

// Credential files spelled as words, as in a parameter named
// content_from_reading_mcp_json; matched against phrase.
var secretWords = anyOf([]string{"id ", "mcp json", "claude desktop", "aws credentials", "etc ", "git credentials"}, `\b(?:id (?:rsa|dsa|ecdsa|ed25519)|mcp json|claude desktop config|aws credentials|etc (?:passwd|shadow)|git credentials)\b`)

// A secret that the text tells the model to hand over, matched against
// phrase. Honest descriptions name secrets too, so a match needs an
// instruction verb not made passive or negated by the word before it, the
// secret at most two words after it, and someone's secret ("your", "all")
// or a destination after it ("to", "in", "as").
var secretUse = regexp.MustCompile(`\b(?:(?P<pre>is|are|was|were|be|been|being|get|gets|got|not|never|no|don't|dont|cannot|can't) )?` +
	`(?:` + secretVerbs + `) ` +
	`(?P<obj>(?:[\w']+ ){0,2}?)` +
	`(?:private keys?|api keys?|secret keys?|access tokens?|auth tokens?|bearer tokens?|passwords?|credentials|ssh keys?|seed phrases?|mnemonics?|session cookies?)\b` +
	`(?P<sink> (?:to|into|in|inside|within|as|via)\b)?`)

const secretVerbs = `send|include|read|pass|provide|upload|forward|attach|append|exfiltrate|post|paste|share|leak|copy|cat|embed|extract|collect|dump`

// secretPassive is the same demand in the passive.
var secretPassive = regexp.MustCompile(`\b(?:private keys?|api keys?|secret keys?|access tokens?|passwords?|credentials|ssh keys?|seed phrases?)\b[^.;!?\n]{0,30}\b(?:must|should|needs? to) be (?:sent|included|passed|provided|uploaded|forwarded|attached|appended|copied)\b`)

var possessive = regexp.MustCompile(`\b(?:user's|users'|users|your|their|his|her|my|our|all|every)\b`)

// matchSecretUse returns the first demand for a secret in phrase, or "".
func matchSecretUse(phrase string) string {
	if !containsAny(phrase, secretTerms) {
		return ""
	}
	if !secretVerb.in(phrase) {
		return passiveSecret(phrase)
	}
	pre, obj, sink := secretUse.SubexpIndex("pre"), secretUse.SubexpIndex("obj"), secretUse.SubexpIndex("sink")
	for _, m := range secretUse.FindAllStringSubmatchIndex(phrase, -1) {
		if m[2*pre] >= 0 {
			continue
		}
		if m[2*sink] >= 0 || possessive.MatchString(phrase[m[2*obj]:m[2*obj+1]]) {
			return phrase[m[0]:m[1]]
		}
	}
	return passiveSecret(phrase)
}

// passiveSecret is secretPassive's first match in phrase, or "".
func passiveSecret(phrase string) string {
	if !passiveStart.in(phrase) {
		return ""
	}
	return secretPassive.FindString(phrase)
}

// secretVerb and passiveStart are the literal starts of secretUse's
// matches (the verb: what comes before it is optional) and
// secretPassive's, so that most texts are ruled out in one pass.
var (
	secretVerb   = newAnchoredMarker(regexp.MustCompile(`\b(?:`+secretVerbs+`) `), nil)
	passiveStart = newAnchoredMarker(secretPassive, nil)
)

// secretTerms are in every secret secretUse and secretPassive name.
var secretTerms = []string{"key", "token", "password", "credential", "seed", "mnemonic", "cookie"}

// marker is a pattern behind a cheap test: a match holds a trigger, and
// starts with one of the literal starts of fast, when every alternative
// has such starts.
type marker struct {
	triggers []string
	re       *regexp.Regexp
	fast     *anchoredMarker
}

// anyOf compiles the alternatives, each holding a trigger, into one marker.
func anyOf(triggers []string, exprs ...string) marker {
	m := marker{triggers: triggers, re: regexp.MustCompile(`(?:` + strings.Join(exprs, `)|(?:`) + `)`)}
	if fast := newAnchoredMarker(m.re, nil); fast.anywhere == nil {
		m.fast = fast
	}
	return m
}

// find returns the leftmost match in s, or "". The literal starts rule
// out most texts in one pass over them, where the triggers take one pass
// each; the whole pattern then runs only on a text that matches.
func (m marker) find(s string) string {
	if m.fast != nil && !m.fast.in(s) || m.fast == nil && !containsAny(s, m.triggers) {
		return ""
	}
	return m.re.FindString(s)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// shadowNames are the names that look like tool names rather than English
// words, but the scanned tool's own: with _, -, . or a digit they match
// ignoring case (fold); camelCase ones only as written (exact). With named
// set, the names are behind it and self is the scanned tool's.
type shadowNames struct {
	fold, exact map[string]bool
	named       Named
	self        string
}

func shadowSet(others []string, self string) shadowNames {
	set := shadowNames{fold: make(map[string]bool), exact: make(map[string]bool)}
	for _, n := range others {
		switch {
		case len(n) < 3 || strings.EqualFold(n, self):
		case strings.ContainsFunc(n, separator):
			set.fold[strings.ToLower(n)] = true
		case identifierLike(n):
			set.exact[n] = true
		}
	}
	return set
}

func (set shadowNames) empty() bool {
	return set.named == nil && len(set.fold) == 0 && len(set.exact) == 0
}

func (set shadowNames) has(c string) bool {
	if set.named != nil {
		if len(c) < 3 || strings.EqualFold(c, set.self) {
			return false
		}
		fold := strings.ContainsFunc(c, separator)
		return (fold || identifierLike(c)) && set.named(c, fold)
	}
	return set.exact[c] || set.fold[strings.ToLower(c)]
}

// separator reports the characters that make a name an identifier.
func separator(r rune) bool { return r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' }

// shadowed returns the first name of set that s mentions as a whole
// identifier: send_email in "call send_email.", not in "resend_email".
func shadowed(s string, set shadowNames) string {
	for c := range mentions(s, set) {
		return c
	}
	return ""
}

// mentions yields, as written and in order, each name of set that s
// mentions as a whole identifier; runs are tried whole and split at dots.
func mentions(s string, set shadowNames) iter.Seq[string] {
	return func(yield func(string) bool) {
		for run := range strings.FieldsFuncSeq(s, notIdentifier) {
			if !strings.Contains(run, ".") {
				if set.has(run) && !yield(run) {
					return
				}
				continue
			}
			parts := strings.Split(run, ".")
			for i := range parts {
				// Longest first; maxNameDots keeps a run of dots linear.
				for j := min(len(parts), i+maxNameDots+1); j > i; j-- {
					if c := strings.Join(parts[i:j], "."); set.has(c) {
						if !yield(c) {
							return
						}
						break
					}
				}
			}
		}
	}
}

const maxNameDots = 3

// notIdentifier reports the characters no tool name holds.
func notIdentifier(r rune) bool {
	return !separator(r) && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z')
}

// identifierLike reports whether a name without separators is camelCase
// (sendEmail), and so not an English word like search.
func identifierLike(name string) bool {
	var prev rune
	for _, r := range name {
		if prev >= 'a' && prev <= 'z' && r >= 'A' && r <= 'Z' {
			return true
		}
		prev = r
	}
	return false
}

// invisible reports whether r hides text: zero-width, bidi and word
// joiner characters, the byte-order mark and tag characters.
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
	any   bool // a leading BOM included
	count int
	runes []rune // distinct, in order of appearance, at most 5
	tags  string // what the tag characters spell in ASCII
}

// invisibles collects the invisible characters of s but a leading BOM.
func invisibles(s string) invisibleChars {
	var inv invisibleChars
	var tags strings.Builder
	for i, r := range s {
		if !invisible(r) {
			continue
		}
		if inv.any = true; i == 0 && r == 0xFEFF {
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
	return strip(s, invisible)
}

// visible writes invisible and control characters as <U+XXXX>.
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

// ScanContract scans a contract as [Contract.Text] wrote it; one cut at its
// bound is scanned as one text.
func ScanContract(text string, others []string) []Finding {
	var c struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  struct {
			Title string `json:"title"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		sc := &scanner{shadow: shadowSet(others, "")}
		sc.text("contract", text)
		return sc.findings
	}
	t := mcp.Tool{Name: c.Name, Title: c.Title, Description: c.Description, RawInputSchema: c.InputSchema}
	if len(c.OutputSchema) > 0 && string(c.OutputSchema) != "null" {
		t.RawOutputSchema = c.OutputSchema
	}
	t.Annotations.Title = c.Annotations.Title
	return Scan(t, others)
}

// Policy says what the hub does with a tool that [Scan] flags.
type Policy string

const (
	// Warn, the default, logs the findings and exposes the tool.
	Warn Policy = "warn"
	// Quarantine hides the tool and rejects calls to it until its pin is
	// approved ([Pin.Approved]).
	Quarantine Policy = "quarantine"
)

// ParsePolicy reads a policy from configuration.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", Warn:
		return Warn, nil
	case Quarantine:
		return Quarantine, nil
	}
	return "", fmt.Errorf("unknown poisoning policy %q (want %q or %q)", s, Warn, Quarantine)
}

// Blocks reports whether p hides a tool with these findings whose pin is
// not approved (see [Pin.Approved]).
func (p Policy) Blocks(findings []Finding, approved bool) bool {
	return p == Quarantine && len(findings) > 0 && !approved
}
