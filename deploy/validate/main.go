// Command validate checks mcp-router's Kubernetes manifests with no
// cluster: each file named by kustomization.yaml is decoded strictly
// (an unknown or misspelt field is an error) into its type from k8s.io/api,
// names, labels and selectors go through apimachinery's validation, and
// the gateway's own needs are checked (see check.go).
//
//	go run . ../k8s
//
// It is a module of its own so that the gateway's module does not depend
// on the Kubernetes API packages.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: validate DIR (the directory of kustomization.yaml)")
		os.Exit(2)
	}
	if err := Check(os.DirFS(os.Args[1])); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "%s: manifests valid\n", os.Args[1])
}
