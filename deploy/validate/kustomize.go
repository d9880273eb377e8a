package main

// kustomize build, in process: what kubectl apply -k would apply.

import (
	"errors"
	"fmt"
	"io/fs"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

const buildDir = "/k8s"

// build runs kustomize on fsys and checks its output: one object per resource listed, each in the
// kustomization's namespace. The built objects, which kubectl apply -k sends, replace the files'.
func (m *manifests) build(fsys fs.FS) error {
	mem := filesys.MakeFsInMemory()
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return err
	}
	for _, n := range names {
		data, err := readFile(fsys, n)
		if err != nil {
			return err
		}
		if err := mem.WriteFile(buildDir+"/"+n, data); err != nil {
			return err
		}
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, buildDir)
	if err != nil {
		return fmt.Errorf("kustomization.yaml: kustomize build: %w", err)
	}
	m.built = true
	var errs []error
	if got, want := res.Size(), len(m.kustomization.Resources); got != want {
		errs = append(errs, fmt.Errorf("kustomization.yaml: kustomize build made %d objects from %d resources, want one each", got, want))
	}
	for _, r := range res.Resources() {
		data, err := r.AsYAML()
		if err == nil {
			err = m.decodeObject("kustomize build", data, true)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if r.GetKind() == "Namespace" {
			continue
		}
		if ns := r.GetNamespace(); ns != m.kustomization.Namespace {
			errs = append(errs, fmt.Errorf("kustomization.yaml: kustomize build put %s %s in namespace %q, want %q", r.GetKind(), r.GetName(), ns, m.kustomization.Namespace))
		}
	}
	return errors.Join(errs...)
}
