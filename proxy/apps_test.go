package proxy

// MCP Apps through the gateway: two servers that serve the same ui://
// view each get a URI of their own, their tools name it, and a read of
// it reaches the right server and answers with its HTML and its _meta.

import (
	"cmp"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// stdioApps is a stdio child serving fakeupstream.Apps(name).
func stdioApps(name string) UpstreamConfig {
	cmd, env := fakeupstream.AppsCommand(name)
	return UpstreamConfig{Name: name, Transport: TransportStdio, Command: cmd, Env: env, Prefix: name + "_"}
}

func TestTwoServersViewsOfOneURIEachReadBackFromItsOwn(t *testing.T) {
	c := overHTTP(t, startHub(t, stdioApps("alpha"), stdioApps("beta")))
	tools, err := c.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	views := map[string]string{}
	for _, tool := range tools.Tools {
		ui, _ := tool.Meta["ui"].(map[string]any)
		uri, _ := ui["resourceUri"].(string)
		if legacy, _ := tool.Meta["ui/resourceUri"].(string); legacy != uri {
			t.Errorf("%s: _meta[\"ui/resourceUri\"] %q, want the same URI as _meta.ui.resourceUri %q", tool.Name, legacy, uri)
		}
		views[tool.Name] = uri
	}
	want := map[string]string{"alpha_show": "ui://alpha/widget", "beta_show": "ui://beta/widget"}
	for name, uri := range want {
		if views[name] != uri {
			t.Errorf("%s's view: got %q, want %q", name, views[name], uri)
		}
	}
	for _, name := range []string{"alpha_refresh", "beta_refresh"} {
		if _, listed := views[name]; listed {
			t.Errorf("the app-only tool %s is listed for the model", name)
		}
	}

	listed, err := c.session.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, up := range []string{"alpha", "beta"} {
		for _, view := range []string{"ui://" + up + "/widget", "ui://" + up + "/settings"} {
			i := slices.IndexFunc(listed.Resources, func(r *sdk.Resource) bool { return r.URI == view })
			if i < 0 {
				t.Errorf("resources/list has no %s", view)
				continue
			}
			if r := listed.Resources[i]; r.MIMEType != "text/html;profile=mcp-app" || !gocmp.Equal(map[string]any(r.Meta), fakeupstream.AppCSP(up)) {
				t.Errorf("resources/list's %s: mimeType %q, _meta %v; want the view's type and %s's _meta", view, r.MIMEType, r.Meta, up)
			}
			readView(t, c, view, up)
		}
	}
}

// readView reads uri through the gateway and checks that it is up's view:
// its HTML, its _meta, under the URI asked for.
func readView(t *testing.T, c *sdkClient, uri, up string) {
	t.Helper()
	res, err := c.session.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Errorf("resources/read %s: %v", uri, err)
		return
	}
	if len(res.Contents) != 1 {
		t.Errorf("resources/read %s: %d contents, want 1", uri, len(res.Contents))
		return
	}
	got := res.Contents[0]
	if !strings.HasPrefix(got.Text, fakeupstream.AppHTML(up)) || got.URI != uri || got.MIMEType != "text/html;profile=mcp-app" {
		t.Errorf("resources/read %s: uri %q, mimeType %q, text %q; want %s's view under the URI asked for", uri, got.URI, got.MIMEType, got.Text, up)
	}
	if diff := gocmp.Diff(fakeupstream.AppCSP(up), map[string]any(got.Meta)); diff != "" {
		t.Errorf("resources/read %s: _meta differs from %s's (-want +got):\n%s", uri, up, diff)
	}
}

// A view a tool names but its server leaves out of resources/list (the
// specification allows it) is listed under the gateway's URI, so that a
// client can read it; a ui:// template gets the same prefix; another
// URI is not renamed, and one that two servers share is still offered
// by the first only.
func TestCatalogListsUnlistedViewsAndPrefixesTemplates(t *testing.T) {
	tool := mcp.NewTool("show")
	tool.Meta = mcp.NewMetaFromMap(map[string]any{"ui": map[string]any{"resourceUri": "ui://hidden"}})
	listing := func() upstream.Listing {
		return upstream.Listing{Tools: []mcp.Tool{tool}, Raw: []mcp.Tool{tool},
			Resources: []mcp.Resource{mcp.NewResource("file:///shared", "shared")},
			Templates: []mcp.ResourceTemplate{mcp.NewResourceTemplate("ui://chart/{id}", "chart")}}
	}
	c := buildCatalog(nil, []offer{{cfg: UpstreamConfig{Name: "a", Prefix: "a_"}, Listing: listing()},
		{cfg: UpstreamConfig{Name: "b", Prefix: "b_"}, Listing: listing()}}, ReservedNames())
	var uris, templates []string
	for _, r := range c.Resources {
		uris = append(uris, r.Upstream+" "+r.Def.URI+" "+r.Def.MIMEType)
	}
	for _, tp := range c.Templates {
		templates = append(templates, tp.Upstream+" "+tp.Def.URITemplate.Raw())
	}
	wantURIs := []string{"a file:///shared ", "a ui://a/hidden text/html;profile=mcp-app", "b ui://b/hidden text/html;profile=mcp-app"}
	if diff := gocmp.Diff(wantURIs, uris); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff([]string{"a ui://a/chart/{id}", "b ui://b/chart/{id}"}, templates); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if owner := c.resourceOwner("ui://b/chart/7"); owner != "b" {
		t.Errorf("ui://b/chart/7 is read from %q, want b", owner)
	}
	if ui := tool.Meta.AdditionalFields["ui"].(map[string]any); ui["resourceUri"] != "ui://hidden" {
		t.Errorf("the upstream's listing was changed in place: %v", ui)
	}
}

// Both protocol eras, over stdio and HTTP, list the views under the
// gateway's URIs and read each from its own server.
func TestViewsReadBackInBothEras(t *testing.T) {
	srv := NewServer(ServerOptions{Hub: startHub(t, stdioApps("alpha"), stdioApps("beta"))})
	t.Cleanup(srv.Close)
	for _, tr := range []string{"stdio", "http"} {
		for _, version := range []string{"", "2025-11-25"} {
			t.Run(tr+" "+cmp.Or(version, "newest"), func(t *testing.T) {
				c := connectEra(t, srv, tr, version)
				listed, err := c.ListResources(t.Context(), mcp.ListResourcesRequest{})
				if err != nil {
					t.Fatal(err)
				}
				var uris []string
				for _, r := range listed.Resources {
					uris = append(uris, r.URI)
				}
				for _, up := range []string{"alpha", "beta"} {
					uri := "ui://" + up + "/widget"
					if !slices.Contains(uris, uri) {
						t.Errorf("resources/list %v has no %s", uris, uri)
					}
					req := mcp.ReadResourceRequest{}
					req.Params.URI = uri
					res, err := c.ReadResource(t.Context(), req)
					if err != nil {
						t.Fatalf("resources/read %s: %v", uri, err)
					}
					got, _ := res.Contents[0].(mcp.TextResourceContents)
					if !strings.HasPrefix(got.Text, fakeupstream.AppHTML(up)) || got.URI != uri || !gocmp.Equal(got.Meta, fakeupstream.AppCSP(up)) {
						t.Errorf("resources/read %s: %+v, want %s's view and _meta under the URI asked for", uri, got, up)
					}
				}
			})
		}
	}
}

// The two basic MCP Apps servers of the ext-apps examples (npm) both call
// their view ui://get-time/mcp-app.html. Behind one gateway each tool
// names a view of its own, and each view reads back byte for byte as its
// server ships it.
func TestNPMAppServersShareAViewURI(t *testing.T) {
	var ups []UpstreamConfig
	for _, name := range []string{"vanillajs", "react"} {
		ups = append(ups, UpstreamConfig{Name: name, Transport: TransportStdio, Command: npmServer(t, "mcp-server-basic-"+name),
			Args: []string{"--stdio"}, Prefix: name + "_"})
	}
	c := overHTTP(t, startHubWith(t, Options{Upstreams: ups, InitTimeout: 60 * time.Second}))
	tools, err := c.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vanillajs", "react"} {
		i := slices.IndexFunc(tools.Tools, func(tool *sdk.Tool) bool { return tool.Name == name+"_get-time" })
		if i < 0 {
			t.Fatalf("no %s_get-time among %d tools", name, len(tools.Tools))
		}
		ui, _ := tools.Tools[i].Meta["ui"].(map[string]any)
		view := "ui://" + name + "/get-time/mcp-app.html"
		if ui["resourceUri"] != view {
			t.Errorf("%s_get-time's view: got %v, want %s", name, ui["resourceUri"], view)
		}
		shipped, err := os.ReadFile(filepath.Join("..", "node_modules", "@modelcontextprotocol", "server-basic-"+name, "dist", "mcp-app.html"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.session.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: view})
		if err != nil {
			t.Fatalf("resources/read %s: %v", view, err)
		}
		if got := res.Contents[0]; got.Text != string(shipped) || got.URI != view || got.MIMEType != "text/html;profile=mcp-app" {
			t.Errorf("resources/read %s: uri %q, mimeType %q, %d bytes; want the %d bytes %s ships, under the URI asked for",
				view, got.URI, got.MIMEType, len(got.Text), len(shipped), name)
		}
	}
}

// A subscription to a view reaches its server under the server's own URI,
// and the server's update reaches the subscriber under the gateway's.
func TestViewSubscriptionsCrossUnderEachSidesURI(t *testing.T) {
	srv := NewServer(ServerOptions{Hub: startHub(t, stdioApps("alpha"))})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	updated := make(chan string, 4)
	cl := sdk.NewClient(&sdk.Implementation{Name: "apps-test", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Subscribe(t.Context(), &sdk.SubscribeParams{URI: "ui://alpha/widget"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "alpha_touch"})
	if err != nil || res.IsError {
		t.Fatalf("alpha_touch: %v %v", err, res)
	}
	if asked := resultText(res); asked != "ui://widget" {
		t.Errorf("the server was asked to follow %q, want its own URI ui://widget", asked)
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	select {
	case uri := <-updated:
		if uri != "ui://alpha/widget" {
			t.Errorf("update for %q, want ui://alpha/widget", uri)
		}
	case <-deadline.C:
		t.Fatal("no resources/updated reached the subscriber")
	}
}
