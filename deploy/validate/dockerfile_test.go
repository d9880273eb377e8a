package main

import (
	"os"
	"strings"
	"testing"
)

func TestRepositoryDockerfilePasses(t *testing.T) {
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckDockerfile("Dockerfile", data); err != nil {
		t.Fatalf("deploy/Dockerfile: %v", err)
	}
}

// Each case breaks the real Dockerfile in one way; the checker must say so.
func TestBrokenDockerfilesFail(t *testing.T) {
	tests := []struct {
		name      string
		old, new  string
		wantParts []string
	}{
		{"unknown instruction", "WORKDIR /src", "WORKDIRR /src", []string{"unknown instruction", "WORKDIRR"}},
		{"lint: lower-case as", "FROM scratch AS static", "FROM scratch as static", []string{"FromAsCasing"}},
		{"shell-form command on scratch", `CMD ["serve", "--http", "0.0.0.0:8080"]` + "\n\n# The default", "CMD serve --http 0.0.0.0:8080\n\n# The default",
			[]string{"stage with-node", "exec form"}},
		{"runs as root", "USER 65532:65532\nVOLUME [\"/var/lib/mcp-router\"]\nEXPOSE 8080\nENTRYPOINT [\"/usr/local/bin/mcp-router\"]\nCMD [\"serve\", \"--http\", \"0.0.0.0:8080\"]\n\n# The default", "USER root\nVOLUME [\"/var/lib/mcp-router\"]\nEXPOSE 8080\nENTRYPOINT [\"/usr/local/bin/mcp-router\"]\nCMD [\"serve\", \"--http\", \"0.0.0.0:8080\"]\n\n# The default",
			[]string{"stage with-node", `USER "root"`}},
		{"cgo on", "CGO_ENABLED=0 go build", "CGO_ENABLED=1 go build", []string{"the binary must be static"}},
		{"registry host", "FROM scratch AS static", "FROM gcr.io/distroless/static AS static", []string{"names the registry gcr.io", "want scratch"}},
		{"no node stage", "AS with-node", "AS with-npm", []string{"no with-node stage"}},
	}
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(data), tt.old) {
				t.Fatalf("the Dockerfile does not hold %q: update the case", tt.old)
			}
			err := CheckDockerfile("Dockerfile", []byte(strings.Replace(string(data), tt.old, tt.new, 1)))
			if err == nil {
				t.Fatal("got no error, want one")
			}
			for _, p := range tt.wantParts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("got %v\nwant it to mention %q", err, p)
				}
			}
		})
	}
}
