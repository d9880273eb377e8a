package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// secretRefs finds the values of an import that look like secrets and names a variable for each.
type secretRefs struct {
	envRefs bool
	vars    map[string]string // variable name → the value it stands for
	notes   []string
}

// server checks one server's args, URL, env and headers; with envRefs, secrets become ${VAR}.
func (sr *secretRefs) server(name string, s *server) {
	sr.args(name, s)
	sr.url(name, s)
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if why := integrity.SecretReason(k, s.Env[k]); why != "" {
			ref := sr.ref(name, envVarName(k), s.Env[k])
			where, refer := name+".env."+k, sr.envRefs
			if file, ok := s.EnvFile[k]; ok { // not in the client's file: never copied in clear
				where, refer = where+" (from envFile "+file+")", true
			}
			sr.report(where, why, ref, "${"+ref+"}", refer)
			if refer {
				s.Env[k] = "${" + ref + "}"
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		scheme, cred := splitScheme(s.Headers[k])
		why := integrity.SecretReason(k, cred)
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
		sr.report(name+".headers."+k, why, ref, scheme+"${"+ref+"}", sr.envRefs)
		if sr.envRefs {
			s.Headers[k] = scheme + "${" + ref + "}"
		}
	}
}

// args checks a command's arguments: "--token=VALUE", "--token VALUE" by the flag's name and shape,
// any other argument by its shape.
func (sr *secretRefs) args(name string, s *server) {
	for i, a := range s.Args {
		key, value, prefix := "", a, ""
		if flag, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") {
			key, value, prefix = flag, v, flag+"="
		} else if i > 0 && strings.HasPrefix(s.Args[i-1], "-") && !strings.HasPrefix(a, "-") {
			key = s.Args[i-1]
		}
		why := integrity.SecretReason(key, value)
		if why == "" {
			continue
		}
		base := envVarName(name + "_" + strings.TrimLeft(key, "-"))
		if key == "" {
			base = envVarName(fmt.Sprintf("%s_arg_%d", name, i))
		}
		ref := sr.ref(name, base, value)
		sr.report(fmt.Sprintf("%s.args[%d]", name, i), why, ref, prefix+"${"+ref+"}", sr.envRefs)
		if sr.envRefs {
			s.Args[i] = prefix + "${" + ref + "}"
		}
	}
}

// url checks the segments of a URL's path by their shapes (https://h/mcp/KEY/sse) and the values of
// its query by their names and shapes (https://h/sse?api_key=VALUE).
func (sr *secretRefs) url(name string, s *server) {
	rest, rawQuery, _ := strings.Cut(s.URL, "?")
	if _, after, ok := strings.Cut(rest, "://"); ok {
		if _, path, ok := strings.Cut(after, "/"); ok {
			for _, seg := range strings.Split(path, "/") {
				why := integrity.SecretReason("", seg)
				if why == "" {
					continue
				}
				ref := sr.ref(name, envVarName(name+"_url_key"), seg)
				sr.report(name+".url (path)", why, ref, "/${"+ref+"}/", sr.envRefs)
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
		why := integrity.SecretReason(key, value)
		if why == "" {
			continue
		}
		ref := sr.ref(name, envVarName(name+"_"+key), value)
		sr.report(name+".url ("+key+")", why, ref, key+"=${"+ref+"}", sr.envRefs)
		if sr.envRefs {
			s.URL = strings.Replace(s.URL, pair, key+"=${"+ref+"}", 1)
		}
	}
}

// ref returns the variable for value: base when it is free or already stands for the same value,
// else base prefixed with the server's name.
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

// report notes one secret: where, why, the variable to hold it and what to write in its place
// (written there when refer).
func (sr *secretRefs) report(where, why, variable, written string, refer bool) {
	if refer {
		sr.notes = append(sr.notes, fmt.Sprintf("%s looks like a secret (%s): written as %s; set %s in the environment mcp-router starts with", where, why, written, variable))
		return
	}
	sr.notes = append(sr.notes, fmt.Sprintf("%s looks like a secret (%s): put it in the environment and write %s", where, why, written))
}

// splitScheme splits an Authorization-style value into its scheme ("Bearer ") and credential.
func splitScheme(v string) (scheme, cred string) {
	for _, s := range []string{"Bearer ", "Basic ", "Token ", "token ", "bearer "} {
		if rest, ok := strings.CutPrefix(v, s); ok {
			return s, rest
		}
	}
	return "", v
}
