package integrity

import (
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// SecretReason says why value, under key, looks like a secret ("" when
// it does not, or is a ${VAR} reference): its shape, its key's name, or
// its randomness.
func SecretReason(key, value string) string {
	if value == "" || strings.Contains(value, "${") {
		return ""
	}
	for _, f := range ScanResult(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(value)}}) {
		if f.Secret() {
			return "its shape: " + f.Kind
		}
	}
	if secretName(key, value) && !plainValue(value) {
		return "its name"
	}
	if randomLooking(value) {
		return "a long random-looking value"
	}
	return ""
}

// Key parts that name a credential: strong ones whatever the value, weak
// ones unless the value is a plain lower-case word ("id", "oauth").
var (
	strongSecretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY",
		"ACCESSKEY", "AUTHKEY", "PRIVATEKEY", "SECRETKEY", "AUTHORIZATION", "CREDENTIAL", "CREDENTIALS",
		"COOKIE", "BEARER"}
	weakSecretWords = []string{"KEY", "AUTH", "PAT", "PRIVATE", "SIGNATURE"}
	plainWord       = regexp.MustCompile(`^[a-z][a-z_-]{0,15}$`)
)

// secretName reports whether a key (GITHUB_TOKEN, X-Api-Key, apiKey)
// names a credential for this value.
func secretName(key, value string) bool {
	parts := keyParts(key)
	for i, part := range parts {
		if slices.Contains(strongSecretWords, part) {
			return true
		}
		if i > 0 && slices.Contains(strongSecretWords, parts[i-1]+part) { // API_KEY, X-Api-Key
			return true
		}
		for _, suffix := range []string{"TOKEN", "SECRET", "PASSWORD", "APIKEY"} {
			if strings.HasSuffix(part, suffix) {
				return true
			}
		}
		if slices.Contains(weakSecretWords, part) && !plainWord.MatchString(value) {
			return true
		}
	}
	return false
}

// keyParts splits a key on non-letters and camelCase, in upper case.
func keyParts(key string) []string {
	var parts []string
	start := 0
	for i := 1; i <= len(key); i++ {
		boundary := i == len(key) || !alnum(key[i]) ||
			(key[i] >= 'A' && key[i] <= 'Z' && key[i-1] >= 'a' && key[i-1] <= 'z')
		if !boundary {
			continue
		}
		if p := strings.Trim(key[start:i], "-_. "); p != "" && alnum(p[0]) {
			parts = append(parts, strings.ToUpper(p))
		}
		start = i
	}
	return parts
}

// plainValue reports flags, short numbers, paths and URLs without a password.
func plainValue(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "none", "null":
		return true
	}
	if len(v) <= 5 && strings.Trim(v, "0123456789") == "" {
		return true
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, `\\`) ||
		len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/') {
		return true
	}
	if i := strings.Index(v, "://"); i > 0 && !strings.ContainsAny(v[:i], " ") {
		rest := v[i+3:]
		host, _, _ := strings.Cut(rest, "/")
		return !strings.Contains(host, "@") && !strings.Contains(rest, "?")
	}
	return false
}

var uuidShape = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// randomLooking reports the shape of a generated key: 20 or more
// characters mixing cases and digits at 3.5 bits each or more, or 32 or
// more hex digits; not a path, URL or UUID.
func randomLooking(v string) bool {
	if len(v) < 20 || len(v) > 4096 || uuidShape.MatchString(v) || plainValue(v) {
		return false
	}
	upper, lower, digits, hex := false, false, false, true
	for i := range len(v) {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z':
			lower, hex = true, hex && c <= 'f'
		case c >= 'A' && c <= 'Z':
			upper, hex = true, hex && c <= 'F'
		case strings.IndexByte("+/=_-.", c) >= 0:
			hex = false
		default:
			return false
		}
	}
	if hex && len(v) >= 32 {
		return true
	}
	return upper && lower && digits && entropy(v) >= 3.5
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := range len(s) {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}
