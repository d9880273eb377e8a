// Package proxy is both sides of the gateway: the Hub holds the upstream
// connections (stdio children, streamable HTTP, SSE, in-process built-ins)
// and their aggregated, namespaced catalog; the Server faces the client
// over stdio or streamable HTTP and shows it the belt of tools, calling
// through the Hub.
package proxy
