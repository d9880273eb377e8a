// Package apps gives the MCP Apps views of the aggregated upstreams (ui://
// resources) unique URIs: upstream u's ui://x is shown as ui://u/x, in the
// resources, templates and tool _meta, and a read of it asks u for ui://x.
// Upstream names cannot hold '/', so the scheme needs no table.
package apps

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Scheme is the start of an MCP Apps resource's URI.
const Scheme = "ui://"

// MIMEType is the MIME type of an MCP Apps HTML view.
const MIMEType = "text/html;profile=mcp-app"

// Extension is the MCP Apps extension's identifier in capabilities.
const Extension = "io.modelcontextprotocol/ui"

// ClientExtension is what the gateway declares to its upstreams: it passes
// views through (a client that does not render them ignores them).
func ClientExtension() map[string]any {
	return map[string]any{Extension: map[string]any{"mimeTypes": []any{MIMEType}}}
}

// uriKeys are the flat _meta keys that name a view (the deprecated MCP
// Apps key and the OpenAI Apps SDK's), besides ui.resourceUri.
var uriKeys = []string{legacyKey, "openai/outputTemplate"}

// legacyKey is the flat key of a tool's view that MCP Apps deprecates.
const legacyKey = "ui/resourceUri"

// URI is the URI the gateway shows for upstream's ui:// uri; others as is.
func URI(upstream, uri string) string {
	rest, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return uri
	}
	return Scheme + upstream + "/" + rest
}

// Original is upstream's own URI for a URI that URI gave; others as is.
func Original(upstream, uri string) string {
	if rest, ok := strings.CutPrefix(uri, Scheme+upstream+"/"); ok {
		return Scheme + rest
	}
	return uri
}

// ToolMeta is a copy of a tool's _meta with its view URIs rewritten, and
// the MCP Apps keys whose value is not a ui:// URI dropped (it returns
// those keys). A _meta that names no view is returned as it is.
func ToolMeta(upstream string, meta *mcp.Meta) (*mcp.Meta, []string) {
	if meta == nil {
		return nil, nil
	}
	ui, _ := meta.AdditionalFields["ui"].(map[string]any)
	_, inUI := ui["resourceUri"]
	if !inUI && !slices.ContainsFunc(uriKeys, func(k string) bool { _, ok := meta.AdditionalFields[k]; return ok }) {
		return meta, nil
	}
	out := *meta
	out.AdditionalFields = maps.Clone(meta.AdditionalFields)
	var dropped []string
	if inUI {
		ui = maps.Clone(ui)
		if uri, ok := ui["resourceUri"].(string); ok && strings.HasPrefix(uri, Scheme) {
			ui["resourceUri"] = URI(upstream, uri)
		} else {
			delete(ui, "resourceUri")
			dropped = append(dropped, "ui.resourceUri")
		}
		out.AdditionalFields["ui"] = ui
	}
	for _, k := range uriKeys {
		v, ok := out.AdditionalFields[k]
		uri, isString := v.(string)
		switch {
		case !ok:
		case isString && strings.HasPrefix(uri, Scheme):
			out.AdditionalFields[k] = URI(upstream, uri)
		case k == legacyKey:
			delete(out.AdditionalFields, k)
			dropped = append(dropped, k)
		}
	}
	return &out, dropped
}

// ViewURIs are the ui:// URIs a tool's _meta names, each once.
func ViewURIs(meta *mcp.Meta) []string {
	if meta == nil {
		return nil
	}
	var uris []string
	add := func(v any) {
		if uri, ok := v.(string); ok && strings.HasPrefix(uri, Scheme) && !slices.Contains(uris, uri) {
			uris = append(uris, uri)
		}
	}
	if ui, ok := meta.AdditionalFields["ui"].(map[string]any); ok {
		add(ui["resourceUri"])
	}
	for _, k := range uriKeys {
		add(meta.AdditionalFields[k])
	}
	return uris
}

// Template is upstream's resource template with URI's URIs (a copy).
func Template(upstream string, t *mcp.URITemplate) *mcp.URITemplate {
	if t == nil || t.Template == nil || !strings.HasPrefix(t.Raw(), Scheme) {
		return t
	}
	raw, _ := json.Marshal(URI(upstream, t.Raw()))
	var out mcp.URITemplate
	if out.UnmarshalJSON(raw) != nil {
		return t // cannot be: the prefix added is literal text
	}
	return &out
}

// Contents are a read's contents with their URIs as the gateway shows them.
func Contents(upstream string, cs []mcp.ResourceContents) []mcp.ResourceContents {
	out := make([]mcp.ResourceContents, len(cs))
	for i, c := range cs {
		switch c := c.(type) {
		case mcp.TextResourceContents:
			c.URI = URI(upstream, c.URI)
			out[i] = c
		case mcp.BlobResourceContents:
			c.URI = URI(upstream, c.URI)
			out[i] = c
		default:
			out[i] = c
		}
	}
	return out
}
