// Package apps gives the MCP Apps user interfaces of the upstreams a
// gateway aggregates (resources under ui://, which a tool names in its
// _meta.ui.resourceUri) URIs that are unique across those upstreams.
//
// Two servers may both serve ui://widget, and a ui:// URI must stay
// ui://, so the catalog (proxy/catalog.go) shows every ui:// URI of
// upstream u as ui://u/<the rest>: in the resources and templates it
// lists, and in the _meta of u's tools; and a resources/read of that URI
// asks u for its own URI and answers with the gateway's (proxy/pipeline.go).
// Upstream names are letters, digits, '_', '-' and '.', so the scheme is
// unambiguous and needs no table. The contents' _meta (the view's CSP,
// permissions, domain) passes through unchanged.
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

// ClientExtension is what the gateway declares to its upstreams under
// capabilities.extensions: it passes views through, and a server should
// offer its tools' views only to a client that says so. It cannot know
// each of its own clients when it connects, and a client that does not
// render views ignores them (the tool works as any other).
func ClientExtension() map[string]any {
	return map[string]any{Extension: map[string]any{"mimeTypes": []any{MIMEType}}}
}

// uriKeys are the keys of a tool's _meta that name its view's URI: the
// MCP Apps key under "ui"; the flat key the specification deprecates but
// servers still send; and the OpenAI Apps SDK's, whose views are ui://
// resources too.
var uriKeys = []string{legacyKey, "openai/outputTemplate"}

// legacyKey is the flat key of a tool's view that MCP Apps deprecates.
const legacyKey = "ui/resourceUri"

// URI is the URI the gateway shows for upstream's uri: ui://<upstream>/
// and the rest for a ui:// URI, any other URI as it is.
func URI(upstream, uri string) string {
	rest, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return uri
	}
	return Scheme + upstream + "/" + rest
}

// Original is upstream's own URI for uri, a URI that URI gave it; any
// other URI as it is.
func Original(upstream, uri string) string {
	if rest, ok := strings.CutPrefix(uri, Scheme+upstream+"/"); ok {
		return Scheme + rest
	}
	return uri
}

// ToolMeta is a tool's _meta with the URIs of its view rewritten by URI
// for upstream, and dropped the MCP Apps keys (_meta.ui.resourceUri and
// the deprecated _meta["ui/resourceUri"]) whose value is not a ui:// URI,
// as the specification requires it to be: it returns those keys. meta
// itself is not changed: it belongs to the upstream's listing. A _meta
// that names no view is returned as it is.
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

// ViewURIs are the ui:// URIs a tool's _meta names as its view, each
// once.
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

// Template is upstream's resource template t as the gateway shows it: a
// ui:// template's URIs are URI's. t itself is not changed.
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

// Contents are the contents of a read from upstream with their ui:// URIs
// as the gateway shows them; everything else, _meta too, as it is.
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
