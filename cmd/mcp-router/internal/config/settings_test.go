package config

import (
	"strings"
	"testing"
)

// The file is decoded once: a top-level setting is the text the file
// holds, read by the same decode as the profiles, so a default_profile
// or a model name that looks like a number names what it says (a second
// decoder read 1.10 as the number 1.1, and 0x10 as 16).
func TestSettingsAreReadAsWritten(t *testing.T) {
	cfg, err := load(t, "default_profile: 1.10\nollama: {embed_model: 0x10}\nprofiles:\n  \"1.10\": {}\n  other: {}\n", nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.DefaultProfile != "1.10" || cfg.Ollama.EmbedModel != "0x10" {
		t.Errorf("default_profile %q, ollama.embed_model %q: want \"1.10\" and \"0x10\", as written", cfg.DefaultProfile, cfg.Ollama.EmbedModel)
	}
	if p, err := cfg.Profile(""); err != nil || p.Name != "1.10" {
		t.Errorf("the default profile: got %q, %v; want 1.10", p.Name, err)
	}
}

// A boolean variable whose text is not a boolean is refused with its
// name, not read as false.
func TestSettingsBooleanVariableNotBoolean(t *testing.T) {
	_, err := load(t, "profiles:\n  p: {}\n", map[string]string{"MCP_ROUTER_LOG_WIRE": "yes"})
	if err == nil || !strings.Contains(err.Error(), `MCP_ROUTER_LOG_WIRE (overriding log.wire): "yes" is not true or false`) {
		t.Fatalf("Load with MCP_ROUTER_LOG_WIRE=yes: %v; want an error naming the variable", err)
	}
}

// A variable overrides the file's setting, and is read as the setting's
// type: "1" and "true" turn a boolean on.
func TestSettingsOverriddenByVariables(t *testing.T) {
	cfg, err := load(t, "log: {wire: false}\nstate: {required: false}\nprofiles:\n  p: {}\n",
		map[string]string{"MCP_ROUTER_LOG_WIRE": "1", "MCP_ROUTER_STATE_REQUIRED": "true", "MCP_ROUTER_DEFAULT_PROFILE": "p"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !cfg.Log.Wire || !cfg.State.Required || cfg.DefaultProfile != "p" {
		t.Errorf("log.wire %v, state.required %v, default_profile %q: want the variables' values", cfg.Log.Wire, cfg.State.Required, cfg.DefaultProfile)
	}
}
