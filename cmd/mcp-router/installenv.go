package main

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// entryEnv is the "env" install writes into the gateway's entry: the
// variables the profile reads, each as a reference the client expands
// (Claude Code ${VAR}, Cursor ${env:VAR}, VS Code ${input:VAR}, which it
// prompts for), or as the value the same client file held in clear
// already. Claude Desktop expands nothing: a variable it holds no value
// for is left for the person to set (missing).
type entryEnv struct {
	profile string   // the profile read; "" when there is none
	vars    []string // what it reads from the environment
	values  map[string]string
	inputs  []vscodeInput
	missing []string
	how     string // how the values were written, for the report
	why     string // why the missing ones were not
}

// vscodeInput is an entry of VS Code's "inputs": a value it prompts for
// once and keeps.
type vscodeInput struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	Description string `json:"description"`
	Password    bool   `json:"password"`
}

func (e *env) entryEnv(client, file string, clientData []byte, places config.Places) entryEnv {
	path := e.profilePath(places)
	data, err := os.ReadFile(path)
	if err != nil {
		return entryEnv{}
	}
	out := entryEnv{profile: path, vars: config.EnvVars(data)}
	if len(out.vars) == 0 {
		return out
	}
	clear := map[string]string{}
	if clientData != nil {
		if cfg, err := config.Load(config.LoadOptions{Path: path, Getenv: e.getenv, Builtins: builtin.Names()}); err == nil {
			clear, _ = cfg.ClientValues(e.profile, client, file, places) // a file of no servers holds no values
		}
	}
	kept := routerEnv(clientData, config.ServersKey(client))
	if clear == nil {
		clear = map[string]string{}
	}
	maps.Copy(clear, kept) // what the person set in the gateway's entry wins
	out.values = map[string]string{}
	for _, v := range out.vars {
		ref, how := clientRef(client, v)
		switch val, ok := clear[v]; {
		case ok:
			out.values[v] = val // in this file in clear already
			out.how = addHow(out.how, "values this file held already")
		case ref != "":
			out.values[v] = ref
			out.how = addHow(out.how, how)
			if client == config.ClientVSCode {
				out.inputs = append(out.inputs, vscodeInput{Type: "promptString", ID: v, Description: v + " for mcp-router", Password: true})
			}
		default:
			out.missing = append(out.missing, v)
			out.why = "Claude Desktop does not expand variables, and this file holds no value for them"
		}
	}
	maps.Copy(out.values, kept) // nothing the entry had is dropped
	return out
}

// routerEnv is the "env" of the gateway's entry in a client's file, which
// an install with --force replaces.
func routerEnv(data []byte, key string) map[string]string {
	var top, servers map[string]json.RawMessage
	var entry struct {
		Env map[string]string `json:"env"`
	}
	clean, _ := config.JSONC(data)
	// Another shape has no env to keep (addRouter says what is wrong).
	if json.Unmarshal(clean, &top) != nil || json.Unmarshal(top[key], &servers) != nil || json.Unmarshal(servers[routerName], &entry) != nil {
		return nil
	}
	return entry.Env
}

// clientRef is how a client's entry refers to variable v so that the
// client fills it in, and how to say so; "" when it cannot.
func clientRef(client, v string) (ref, how string) {
	switch client {
	case config.ClientClaudeCode:
		return "${" + v + "}", "references Claude Code expands from its environment"
	case config.ClientCursor:
		return "${env:" + v + "}", "references Cursor expands from its environment"
	case config.ClientVSCode:
		return "${input:" + v + "}", "inputs VS Code prompts for once and keeps"
	}
	return "", ""
}

func addHow(have, how string) string {
	switch {
	case have == "":
		return how
	case strings.Contains(have, how):
		return have
	}
	return have + "; " + how
}

// addInputs adds VS Code inputs to the file's "inputs", keeping those
// there (an input of the same id stays as it is).
func addInputs(top map[string]json.RawMessage, inputs []vscodeInput) error {
	if len(inputs) == 0 {
		return nil
	}
	var have []json.RawMessage
	if raw, ok := top["inputs"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &have); err != nil {
			return err
		}
	}
	var ids []string
	for _, raw := range have {
		var in struct{ ID string }
		_ = json.Unmarshal(raw, &in) // an input of another shape has no id to match
		ids = append(ids, in.ID)
	}
	for _, in := range inputs {
		if slices.Contains(ids, in.ID) {
			continue
		}
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		have = append(have, raw)
	}
	var err error
	top["inputs"], err = json.Marshal(have)
	return err
}
