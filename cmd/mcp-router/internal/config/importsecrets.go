package config

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// secretRefs finds the values of an import that look like secrets and
// names an environment variable for each.
type secretRefs struct {
	envRefs bool
	vars    map[string]string // variable name → the value it stands for
	notes   []string
}

// server checks one server's args, URL query, env and headers, replacing
// the secrets with ${VAR} when envRefs is set.
func (sr *secretRefs) server(name string, s *server) {
	sr.args(name, s)
	sr.url(name, s)
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if why := secretReason(k, s.Env[k]); why != "" {
			ref := sr.ref(name, envVarName(k), s.Env[k])
			sr.report(name+".env."+k, why, ref, "${"+ref+"}")
			if sr.envRefs {
				s.Env[k] = "${" + ref + "}"
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		scheme, cred := splitScheme(s.Headers[k])
		why := secretReason(k, cred)
		if why == "" {
			continue
		}
		base := envVarName(k) // X-Api-Key of server "docs": DOCS_X_API_KEY; CONTEXT7_API_KEY of "context7": itself
		if !strings.HasPrefix(base, envVarName(name)) {
			base = envVarName(name + "_" + k)
		}
		if scheme != "" {
			base = envVarName(name + "_token")
		}
		ref := sr.ref(name, base, cred)
		sr.report(name+".headers."+k, why, ref, scheme+"${"+ref+"}")
		if sr.envRefs {
			s.Headers[k] = scheme + "${" + ref + "}"
		}
	}
}

// args checks a command's arguments: "--token=VALUE", "--token VALUE"
// by the flag's name and shape, any other argument by its shape.
func (sr *secretRefs) args(name string, s *server) {
	for i, a := range s.Args {
		key, value, prefix := "", a, ""
		if flag, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") {
			key, value, prefix = flag, v, flag+"="
		} else if i > 0 && strings.HasPrefix(s.Args[i-1], "-") && !strings.HasPrefix(a, "-") {
			key = s.Args[i-1]
		}
		why := secretReason(key, value)
		if why == "" {
			continue
		}
		base := envVarName(name + "_" + strings.TrimLeft(key, "-"))
		if key == "" {
			base = envVarName(fmt.Sprintf("%s_arg_%d", name, i))
		}
		ref := sr.ref(name, base, value)
		sr.report(fmt.Sprintf("%s.args[%d]", name, i), why, ref, prefix+"${"+ref+"}")
		if sr.envRefs {
			s.Args[i] = prefix + "${" + ref + "}"
		}
	}
}

// url checks the segments of a URL's path by their shapes
// (https://h/mcp/KEY/sse) and the values of its query by their names and
// shapes (https://h/sse?api_key=VALUE).
func (sr *secretRefs) url(name string, s *server) {
	rest, rawQuery, _ := strings.Cut(s.URL, "?")
	if _, after, ok := strings.Cut(rest, "://"); ok {
		if _, path, ok := strings.Cut(after, "/"); ok {
			for _, seg := range strings.Split(path, "/") {
				why := secretReason("", seg)
				if why == "" {
					continue
				}
				ref := sr.ref(name, envVarName(name+"_url_key"), seg)
				sr.report(name+".url (path)", why, ref, "/${"+ref+"}/")
				if sr.envRefs {
					s.URL = strings.Replace(s.URL, "/"+seg, "/${"+ref+"}", 1)
				}
			}
		}
	}
	if rawQuery == "" {
		return
	}
	rawQuery, _, _ = strings.Cut(rawQuery, "#")
	for _, pair := range strings.Split(rawQuery, "&") {
		key, value, _ := strings.Cut(pair, "=")
		why := secretReason(key, value)
		if why == "" {
			continue
		}
		ref := sr.ref(name, envVarName(name+"_"+key), value)
		sr.report(name+".url ("+key+")", why, ref, key+"=${"+ref+"}")
		if sr.envRefs {
			s.URL = strings.Replace(s.URL, pair, key+"=${"+ref+"}", 1)
		}
	}
}

// ref returns the variable for value: base when it is free or already
// stands for the same value, else base prefixed with the server's name.
func (sr *secretRefs) ref(server, base, value string) string {
	for i, v := 0, base; ; i++ {
		if old, taken := sr.vars[v]; !taken || old == value {
			sr.vars[v] = value
			return v
		}
		v = envVarName(server + "_" + base)
		if i > 0 {
			v = fmt.Sprintf("%s_%d", v, i+1)
		}
	}
}

// report notes one secret: where it is, why it looks like one, the
// variable to hold it and what to write in its place.
func (sr *secretRefs) report(where, why, variable, written string) {
	if sr.envRefs {
		sr.notes = append(sr.notes, fmt.Sprintf("%s looks like a secret (%s): written as %s; set %s in the environment mcp-router starts with", where, why, written, variable))
		return
	}
	sr.notes = append(sr.notes, fmt.Sprintf("%s looks like a secret (%s): put it in the environment and write %s", where, why, written))
}

// splitScheme splits an Authorization-style value into its scheme
// ("Bearer ") and credential.
func splitScheme(v string) (scheme, cred string) {
	for _, s := range []string{"Bearer ", "Basic ", "Token ", "token ", "bearer "} {
		if rest, ok := strings.CutPrefix(v, s); ok {
			return s, rest
		}
	}
	return "", v
}

// secretReason says why value, under key, looks like a secret ("" when
// it does not): a known credential shape (integrity's detectors), a key
// named like a credential, or a long random-looking string. A value that
// is already a ${VAR} reference is not one.
func secretReason(key, value string) string {
	if value == "" || strings.Contains(value, "${") {
		return ""
	}
	for _, f := range integrity.ScanResult(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(value)}}) {
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

// Key parts that name a credential: strong ones whatever the value,
// weak ones (KEY in PRIMARY_KEY, AUTH in AUTH_TYPE) unless the value is a
// plain lower-case word such as "id" or "oauth".
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

// keyParts splits a key on non-letters and on lower-to-upper case
// changes, in upper case.
func keyParts(key string) []string {
	var parts []string
	start := 0
	for i := 1; i <= len(key); i++ {
		boundary := i == len(key) || !isAlnum(key[i]) ||
			(key[i] >= 'A' && key[i] <= 'Z' && key[i-1] >= 'a' && key[i-1] <= 'z')
		if !boundary {
			continue
		}
		if p := strings.Trim(key[start:i], "-_. "); p != "" && isAlnum(p[0]) {
			parts = append(parts, strings.ToUpper(p))
		}
		start = i
	}
	return parts
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// plainValue reports values that are not credentials whatever their key
// is called: flags, short numbers, paths and URLs without a password.
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
// characters that mix upper case, lower case and digits with high entropy
// (at least 3.5 bits per character), or 32 or more hex digits; not a
// path, URL or UUID. Model names and slugs (lower case words and
// numbers) are not.
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
