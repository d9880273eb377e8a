package main

// Reading the manifests kustomization.yaml names, each decoded strictly into its API type.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// maxManifestBytes bounds one file read: the manifests are a few KiB.
const maxManifestBytes = 1 << 20

// secretExample shows the Secret's keys: checked, but deliberately not in kustomization.yaml.
const secretExample = "secret.example.yaml"

// manifests are the decoded objects, one of each kind.
type manifests struct {
	kustomization types.Kustomization
	namespace     *corev1.Namespace
	configMap     *corev1.ConfigMap
	deployment    *appsv1.Deployment
	service       *corev1.Service
	pdb           *policyv1.PodDisruptionBudget
	secret        *corev1.Secret    // the example
	files         map[string]string // kind to the file it came from, for messages
	built         bool              // the objects are kustomize's output
}

// load reads and builds kustomization.yaml and decodes every resource it lists and the example
// Secret. A file that cannot be read or decoded is an error naming it; the kinds found are
// returned even when some file failed.
func load(fsys fs.FS) (*manifests, error) {
	m := &manifests{files: map[string]string{}}
	if err := decodeFile(fsys, "kustomization.yaml", &m.kustomization); err != nil {
		return nil, err
	}
	var errs []error
	k := m.kustomization
	if k.APIVersion != types.KustomizationVersion || k.Kind != types.KustomizationKind {
		errs = append(errs, fmt.Errorf("kustomization.yaml: apiVersion/kind: got %s/%s, want kustomize.config.k8s.io/v1beta1/Kustomization", k.APIVersion, k.Kind))
	}
	for i, name := range k.Resources {
		if slices.Index(k.Resources, name) != i {
			errs = append(errs, fmt.Errorf("kustomization.yaml: resources[%d]: %s listed twice", i, name))
			continue
		}
		if path.Base(name) != name || !strings.HasSuffix(name, ".yaml") {
			errs = append(errs, fmt.Errorf("kustomization.yaml: resources[%d]: %q is not a .yaml file beside it", i, name))
			continue
		}
		errs = append(errs, m.loadObject(fsys, name))
	}
	errs = append(errs, unlisted(fsys, k.Resources))
	if errors.Join(errs...) == nil { // kustomize would stop at the first of them
		errs = append(errs, m.build(fsys))
	}
	if err := m.loadObject(fsys, secretExample); err != nil {
		errs = append(errs, err)
	} else if m.secret == nil {
		errs = append(errs, fmt.Errorf("%s: want a v1 Secret", secretExample))
	}
	return m, errors.Join(errs...)
}

// unlisted reports manifests kustomization.yaml leaves out: they would never be applied.
func unlisted(fsys fs.FS, resources []string) error {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if n != "kustomization.yaml" && n != secretExample && !slices.Contains(resources, n) {
			errs = append(errs, fmt.Errorf("%s: not listed in kustomization.yaml resources", n))
		}
	}
	return errors.Join(errs...)
}

func (m *manifests) loadObject(fsys fs.FS, name string) error {
	data, err := readFile(fsys, name)
	if err != nil {
		return err
	}
	return m.decodeObject(name, data, false)
}

// decodeObject decodes one object, from file name or, when built, from kustomize's output for that
// file's kind; the built object replaces the file's, so that the checks see what would be applied.
func (m *manifests) decodeObject(name string, data []byte, built bool) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	gvk := tm.APIVersion + "/" + tm.Kind
	if built {
		name = m.files[gvk] + " (as kustomize builds it)"
	} else if prev, ok := m.files[gvk]; ok {
		return fmt.Errorf("%s: a second %s (the first is in %s)", name, gvk, prev)
	}
	var obj any
	switch gvk {
	case "v1/Namespace":
		obj = fresh(&m.namespace)
	case "v1/ConfigMap":
		obj = fresh(&m.configMap)
	case "apps/v1/Deployment":
		obj = fresh(&m.deployment)
	case "v1/Service":
		obj = fresh(&m.service)
	case "policy/v1/PodDisruptionBudget":
		obj = fresh(&m.pdb)
	case "v1/Secret":
		obj = fresh(&m.secret)
	default:
		return fmt.Errorf("%s: apiVersion/kind %s is not one this checker knows (apps/v1 Deployment, v1 Service, ConfigMap, Namespace or Secret, policy/v1 PodDisruptionBudget)", name, gvk)
	}
	if !built {
		m.files[gvk] = name
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// fresh points *p at a new T and returns it.
func fresh[T any](p **T) *T {
	*p = new(T)
	return *p
}

func decodeFile(fsys fs.FS, name string, v any) error {
	data, err := readFile(fsys, name)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// readFile reads a bounded file, refusing a second document, which the decoder would ignore.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxManifestBytes+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if buf.Len() > maxManifestBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxManifestBytes)
	}
	for i, line := range strings.Split(buf.String(), "\n") {
		if i > 0 && strings.HasPrefix(line, "---") {
			return nil, fmt.Errorf("%s:%d: a second YAML document; keep one object a file", name, i+1)
		}
	}
	return buf.Bytes(), nil
}
