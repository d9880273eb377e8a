package integrity

import "strings"

// Kinds of secret [ScanResult] finds: gitleaks' shapes for the same
// credentials, kept to formats with a fixed prefix (see secretRules).
const (
	// KindPrivateKey: a PEM private key block, through its END line (or
	// the end of its base64 when the block was cut short).
	KindPrivateKey = "private_key"
	// KindAWSAccessKey: AKIA or ASIA and 16 base32 characters.
	KindAWSAccessKey = "aws_access_key_id"
	// KindGitHubToken: ghp_ (gho_, ghu_, ghs_, ghr_) and at least 36
	// letters and digits, or github_pat_ and at least 82.
	KindGitHubToken = "github_token"
	// KindSlackToken: xoxb- (xoxp-, xoxa-, xoxr-) and at least 10 letters,
	// digits and dashes, some of them digits.
	KindSlackToken = "slack_token"
	// KindOpenAIKey: sk- and at least 32 of [A-Za-z0-9_-] mixing upper
	// case, lower case and digits.
	KindOpenAIKey = "openai_api_key"
	// KindAnthropicKey: the same shape starting with sk-ant-.
	KindAnthropicKey = "anthropic_api_key"
	// KindGoogleAPIKey: AIza and exactly 35 of [A-Za-z0-9_-].
	KindGoogleAPIKey = "google_api_key"
	// KindJWT: two base64url parts of at least 19 characters starting
	// "ey", each followed by a dot, and an optional signature of 10 or more.
	KindJWT = "jwt"
	// KindStripeKey: sk_live_ or rk_live_ and at least 10 letters and digits.
	KindStripeKey = "stripe_key"
)

// secretKinds are the kinds above: findings of these are redacted.
var secretKinds = map[string]bool{
	KindPrivateKey: true, KindAWSAccessKey: true, KindGitHubToken: true, KindSlackToken: true,
	KindOpenAIKey: true, KindAnthropicKey: true, KindGoogleAPIKey: true, KindJWT: true, KindStripeKey: true,
}

// A secretRule recognises one token shape where its prefix starts a word.
type secretRule struct {
	kind, prefix string
	// end returns where the token that starts at i ends, or -1.
	end func(sc *secretScan, i int) int
}

// secretRules, longer prefixes before shorter ones that they extend.
var secretRules = func() []secretRule {
	rules := []secretRule{{KindGitHubToken, "github_pat_", runEnd(len("github_pat_"), wordChar, 82, 255)}}
	add := func(kind string, end func(*secretScan, int) int, prefixes ...string) {
		for _, p := range prefixes {
			rules = append(rules, secretRule{kind, p, end})
		}
	}
	add(KindAWSAccessKey, awsEnd, "AKIA", "ASIA")
	add(KindGitHubToken, runEnd(4, alnumChar, 36, 255), "ghp_", "gho_", "ghu_", "ghs_", "ghr_")
	add(KindSlackToken, slackEnd, "xoxb-", "xoxp-", "xoxa-", "xoxr-")
	add(KindAnthropicKey, skEnd, "sk-ant-")
	add(KindOpenAIKey, skEnd, "sk-")
	add(KindStripeKey, runEnd(len("sk_live_"), alnumChar, 10, 255), "sk_live_", "rk_live_")
	add(KindGoogleAPIKey, runEnd(4, base64URLChar, 35, 35), "AIza")
	add(KindJWT, jwtEnd, "eyJ")
	return rules
}()

// rulesByFirst indexes secretRules by the first byte of their prefix.
var rulesByFirst = func() (t [256][]secretRule) {
	for _, r := range secretRules {
		t[r.prefix[0]] = append(t[r.prefix[0]], r)
	}
	return t
}()

// Character classes, as byte tables.
var (
	wordChar      = class(func(c byte) bool { return alnum(c) || c == '_' })
	alnumChar     = class(alnum)
	base64URLChar = class(func(c byte) bool { return alnum(c) || c == '_' || c == '-' })
	awsChar       = class(func(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '2' && c <= '7' })
	slackChar     = class(func(c byte) bool { return alnum(c) || c == '-' })
	// pemBodyChar is base64 and the white space between its lines, as
	// text or as the \n escapes of a JSON document inside the text.
	pemBodyChar = class(func(c byte) bool {
		return alnum(c) || c == '+' || c == '/' || c == '=' || c == '\\' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
	})
	pemLabelChar = class(func(c byte) bool {
		return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '_' || c == '-'
	})
)

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

func class(in func(byte) bool) (t [256]bool) {
	for c := range 256 {
		t[c] = in(byte(c))
	}
	return t
}

// run returns the end of the run of class characters from i.
func run(s string, i int, cls *[256]bool) int {
	for i < len(s) && cls[s[i]] {
		i++
	}
	return i
}

// runMemo is the last run of one class a scan measured.
type runMemo struct {
	cls       *[256]bool
	from, end int
}

// run returns the end of the run of class characters from i, measuring a
// run once: a candidate inside the last run of its class ("sk-sk-sk-...")
// gets its end at once, so the scan stays linear.
func (sc *secretScan) run(i int, cls *[256]bool) int {
	for k := range sc.runs {
		m := &sc.runs[k]
		if m.cls != cls {
			continue
		}
		if i < m.from || i >= m.end {
			m.from, m.end = i, run(sc.s, i, cls)
			sc.measured += m.end - i
		}
		return m.end
	}
	end := run(sc.s, i, cls)
	sc.measured += end - i
	sc.runs = append(sc.runs, runMemo{cls, i, end})
	return end
}

// runEnd matches a prefix of n bytes and then a whole run of lo to hi class characters.
func runEnd(n int, cls [256]bool, lo, hi int) func(*secretScan, int) int {
	return func(sc *secretScan, i int) int {
		j := sc.run(i+n, &cls)
		if k := j - (i + n); k < lo || k > hi {
			return -1
		}
		return j
	}
}

// startsWord reports whether a token may start at i: at the start, after a
// byte that is not a word character, or after a \n, \r or \t escape.
func startsWord(s string, i int) bool {
	if i == 0 || !wordChar[s[i-1]] {
		return true
	}
	return i >= 2 && s[i-2] == '\\' && (s[i-1] == 'n' || s[i-1] == 'r' || s[i-1] == 't')
}

func awsEnd(sc *secretScan, i int) int {
	s := sc.s
	j := i + 4
	k := sc.run(j, &awsChar)
	if k-j < 16 {
		return -1
	}
	if k = j + 16; k < len(s) && wordChar[s[k]] {
		return -1
	}
	return k
}

// maxTokenRun bounds the tokens whose run may hold other candidates.
const maxTokenRun = 255

func slackEnd(sc *secretScan, i int) int {
	s := sc.s
	j := i + len("xoxb-")
	k := sc.run(j, &slackChar)
	if k-j < 10 || k-j > maxTokenRun || !strings.ContainsAny(s[j:k], "0123456789") {
		return -1
	}
	return k
}

// skEnd matches an sk- key: a long run that mixes cases and digits.
func skEnd(sc *secretScan, i int) int {
	s := sc.s
	j := i + len("sk-")
	k := sc.run(j, &base64URLChar)
	if k-j < 32 || k-j > maxTokenRun {
		return -1
	}
	var upper, lower, digit bool
	for _, c := range []byte(s[j:k]) {
		upper = upper || c >= 'A' && c <= 'Z'
		lower = lower || c >= 'a' && c <= 'z'
		digit = digit || c >= '0' && c <= '9'
	}
	if !upper || !lower || !digit {
		return -1
	}
	return k
}

// jwtEnd matches header.payload.signature; the signature may be empty
// (an unsecured token is still a bearer credential).
func jwtEnd(sc *secretScan, i int) int {
	s := sc.s
	h := sc.run(i, &base64URLChar)
	if h-i < 19 || h >= len(s) || s[h] != '.' || !strings.HasPrefix(s[h+1:], "ey") {
		return -1
	}
	p := sc.run(h+1, &base64URLChar)
	if p-(h+1) < 19 || p >= len(s) || s[p] != '.' {
		return -1
	}
	sig := sc.run(p+1, &base64URLChar)
	if n := sig - (p + 1); n > 0 && n < 10 {
		return -1
	}
	for k := 0; k < 2 && sig < len(s) && s[sig] == '='; k++ {
		sig++
	}
	return sig
}

// PEM bounds: even a 16384-bit RSA key fits in maxPEMBody.
const (
	pemBegin    = "-----BEGIN "
	pemEnd      = "-----END"
	maxPEMLabel = 100
	minPEMBody  = 64
	maxPEMBody  = 64 << 10
)

// secretScan finds the secrets of one text, left to right.
type secretScan struct {
	s string
	// endAt is the first "-----END" at or after the last place looked
	// from; -1: none, -2: not looked yet. It only moves forward.
	endAt    int
	runs     []runMemo // the last run measured, per class
	measured int       // bytes the runs read, for the linearity test
}

// eachSecret calls fn with each secret in s, in order, until it returns false.
func eachSecret(s string, fn func(kind string, start, end int) bool) {
	i := 0
	for i < len(s) && !canStart(s, i) {
		i++
	}
	if i == len(s) {
		return // most texts (tool names, log messages): no scan to allocate
	}
	sc := secretScan{s: s, endAt: -2}
	sc.each(fn)
}

// canStart reports whether a secret's prefix starts at s[i].
func canStart(s string, i int) bool {
	if s[i] == '-' {
		return strings.HasPrefix(s[i:], pemBegin)
	}
	rules := rulesByFirst[s[i]]
	if len(rules) == 0 || !startsWord(s, i) {
		return false
	}
	for _, r := range rules {
		if strings.HasPrefix(s[i:], r.prefix) {
			return true
		}
	}
	return false
}

func (sc *secretScan) each(fn func(kind string, start, end int) bool) {
	s := sc.s
	for i := 0; i < len(s); {
		kind, end := "", -1
		if canStart(s, i) {
			kind, end = sc.at(i)
		}
		if end < 0 {
			i++
			continue
		}
		if !fn(kind, i, end) {
			return
		}
		i = end
	}
}

// at matches a secret starting at i, where one can start.
func (sc *secretScan) at(i int) (kind string, end int) {
	s := sc.s
	if s[i] == '-' {
		if strings.HasPrefix(s[i:], pemBegin) {
			return KindPrivateKey, sc.pemEnd(i)
		}
		return "", -1
	}
	for _, r := range rulesByFirst[s[i]] { // each has checked that a word starts at i
		if strings.HasPrefix(s[i:], r.prefix) {
			if end := r.end(sc, i); end > i {
				return r.kind, end
			}
		}
	}
	return "", -1
}

// pemEnd matches a private key block starting at i.
func (sc *secretScan) pemEnd(i int) int {
	s := sc.s
	j := i + len(pemBegin)
	k := strings.Index(s[j:min(len(s), j+maxPEMLabel+5)], "-----")
	if k < 0 {
		return -1
	}
	label := s[j : j+k]
	if !strings.HasSuffix(label, "PRIVATE KEY") && !strings.HasSuffix(label, "PRIVATE KEY BLOCK") {
		return -1
	}
	for _, c := range []byte(label) {
		if !pemLabelChar[c] {
			return -1
		}
	}
	body := j + k + len("-----")
	if e := sc.nextEnd(body); e >= 0 && e-body <= maxPEMBody {
		if e-body < minPEMBody {
			return -1
		}
		after := e + len(pemEnd)
		if c := strings.Index(s[after:min(len(s), after+maxPEMLabel+5)], "-----"); c >= 0 {
			return after + c + len("-----")
		}
		return after
	}
	// No END line: the block was cut short; take the base64 that follows.
	end, n := body, 0
	for end < len(s) && end-body < maxPEMBody && pemBodyChar[s[end]] {
		if alnum(s[end]) {
			n++
		}
		end++
	}
	if n < minPEMBody {
		return -1
	}
	return end
}

// nextEnd returns the first "-----END" at or after from, or -1.
func (sc *secretScan) nextEnd(from int) int {
	if sc.endAt == -2 || sc.endAt >= 0 && sc.endAt < from {
		sc.endAt = -1
		if k := strings.Index(sc.s[from:], pemEnd); k >= 0 {
			sc.endAt = from + k
		}
	}
	return sc.endAt
}

// Redacted is what replaces a secret of kind in a redacted result.
func Redacted(kind string) string { return "[redacted " + kind + "]" }

// redactSecrets replaces each secret in s with [Redacted] of its kind.
func redactSecrets(s string) (string, bool) {
	var b strings.Builder
	last, found := 0, false
	eachSecret(s, func(kind string, start, end int) bool {
		if !found {
			b.Grow(len(s))
			found = true
		}
		b.WriteString(s[last:start])
		b.WriteString(Redacted(kind))
		last = end
		return true
	})
	if !found {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// RedactSecrets is s with every secret [ScanResult] knows replaced with
// [Redacted] of its kind: for text leaving by other sinks (logs, status).
func RedactSecrets(s string) string {
	out, _ := redactSecrets(s)
	return out
}
