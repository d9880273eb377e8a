package config

import (
	"cmp"
	"fmt"
	"strings"
)

// ClientValues finds, for the ${VAR}s of a profile of c ("" the default), the values a client's
// file holds in clear at the same key ("ghp_…" in the client's github env, "${GITHUB_TOKEN}" in the
// profile). install writes only those into that same file: a secret is never copied elsewhere.
func (c *Config) ClientValues(profile, client, file string, places Places) (map[string]string, error) {
	p, r, err := c.readClient(profile, client, file, places)
	if err != nil {
		return nil, err
	}
	ups := map[string]rawUpstream{}
	for _, u := range p.Value.Upstreams {
		ups[u.Key] = u.Value
	}
	out := map[string]string{}
	for _, s := range r.servers {
		u, ok := ups[r.safe[s]]
		if !ok {
			continue
		}
		for k, v := range u.Env {
			clearValue(out, v, s.Env[k])
		}
		for k, v := range u.Headers {
			clearValue(out, v, s.Headers[k])
		}
		if len(u.Args) == len(s.Args) {
			for i, a := range u.Args {
				clearValue(out, a, s.Args[i])
			}
		}
		if u.URL != nil {
			clearValue(out, *u.URL, s.URL)
		}
	}
	return out, nil
}

// clearValue notes VAR's value when written, with one ${VAR}, spells the client's value in clear
// ("Bearer ${T}" and "Bearer abc": T is abc).
func clearValue(out map[string]string, written, client string) {
	start := strings.Index(written, "${")
	end := strings.IndexByte(written[max(start, 0):], '}')
	if start < 0 || end < 0 || strings.Contains(client, "${") || strings.Contains(written[start+2:], "${") {
		return
	}
	name := written[start+2 : start+end]
	prefix, suffix := written[:start], written[start+end+1:]
	if !validVarName(name) || (start > 0 && written[start-1] == '$') || len(client) <= len(prefix)+len(suffix) ||
		!strings.HasPrefix(client, prefix) || !strings.HasSuffix(client, suffix) {
		return
	}
	if _, seen := out[name]; !seen {
		out[name] = client[len(prefix) : len(client)-len(suffix)]
	}
}

// rawProfile is the named profile as written ("" = default_profile, else the only one, or default).
func (c *Config) rawProfile(name string) (entry[rawProfile], error) {
	only := ""
	if len(c.names) == 1 {
		only = c.names[0]
	}
	name = cmp.Or(name, c.DefaultProfile, only, "default")
	p, ok := c.profiles[name]
	if !ok {
		return p, fmt.Errorf("%s: no profile %q (profiles: %s)", c.File, name, strings.Join(c.names, ", "))
	}
	return p, nil
}
