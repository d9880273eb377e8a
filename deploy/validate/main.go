// Command validate checks mcp-router's deployment files with no cluster and no container engine:
//
//	validate -k8s ../k8s            # the Kubernetes manifests (check.go)
//	validate -dockerfile ../Dockerfile  # the image build (dockerfile.go)
//	validate -static BIN            # a binary the image could run (elf.go)
//
// The manifests named by kustomization.yaml are decoded strictly (an unknown or misspelt field is
// an error) into their types from k8s.io/api, and names, labels and selectors go through
// apimachinery's validation; the Dockerfile goes through BuildKit's parser and linter. It is a
// module of its own so that the gateway's module does not depend on them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

func main() {
	k8s := flag.String("k8s", "", "the directory of kustomization.yaml")
	dockerfile := flag.String("dockerfile", "", "the Dockerfile")
	static := flag.String("static", "", "an ELF binary that must be statically linked")
	flag.Parse()
	if flag.NArg() > 0 || *k8s == "" && *dockerfile == "" && *static == "" {
		fmt.Fprintln(os.Stderr, "usage: validate [-k8s DIR] [-dockerfile FILE] [-static BIN]")
		os.Exit(2)
	}
	var errs []error
	if *k8s != "" {
		errs = append(errs, Check(os.DirFS(*k8s)))
	}
	if *dockerfile != "" {
		data, err := os.ReadFile(*dockerfile)
		if err == nil {
			err = CheckDockerfile(*dockerfile, data)
		}
		errs = append(errs, err)
	}
	if *static != "" {
		errs = append(errs, CheckStatic(*static))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
