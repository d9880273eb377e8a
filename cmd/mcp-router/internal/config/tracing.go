package config

import (
	"cmp"
	"net/url"
	"strings"
)

// Tracing is the tracing section: OpenTelemetry spans exported over OTLP/HTTP, off unless
// OTLPEndpoint is set.
type Tracing struct {
	// OTLPEndpoint is the URL spans are posted to; one without a path gets the standard /v1/traces.
	OTLPEndpoint string
	// ServiceName is the service.name of the spans ["mcp-router"].
	ServiceName string
}

type rawTracing struct {
	OTLPEndpoint *lineString `yaml:"otlp_endpoint"`
	ServiceName  string      `yaml:"service_name"`
}

func (c *Config) tracing(v *validator, raw rawTracing) {
	c.Tracing = Tracing{ServiceName: cmp.Or(raw.ServiceName, "mcp-router")}
	if raw.OTLPEndpoint == nil || raw.OTLPEndpoint.S == "" {
		return
	}
	u, err := url.Parse(raw.OTLPEndpoint.S)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.errorf(raw.OTLPEndpoint.Line, "tracing.otlp_endpoint", "%q is not an http(s) URL (like http://127.0.0.1:4318)", raw.OTLPEndpoint.S)
		return
	}
	if strings.Trim(u.Path, "/") == "" {
		u.Path = "/v1/traces"
	}
	c.Tracing.OTLPEndpoint = u.String()
}
