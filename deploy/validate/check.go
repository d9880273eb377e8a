package main

// What the manifests must hold for mcp-router to run: the API's own rules (apimachinery's
// validation), then probes with a Host the gateway accepts, selectors that find the pods, secrets
// and config that exist, and a non-root pod on a read-only root file system.

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// The image's paths that must be writable when the root file system is read-only.
var writableDirs = []string{"/tmp", "/var/lib/mcp-router"}

// Check loads the manifests in fsys and returns every problem found, joined, each naming its file
// and field. Once kustomize has built them, the built objects are checked.
func Check(fsys fs.FS) error {
	m, err := load(fsys)
	if m == nil {
		return err
	}
	errs := []error{err}
	for _, c := range []struct {
		present bool
		what    string
		check   func() []error
	}{
		{m.namespace != nil, "v1 Namespace", m.checkNamespace},
		{m.configMap != nil, "v1 ConfigMap", m.checkConfigMap},
		{m.deployment != nil, "apps/v1 Deployment", m.checkDeployment},
		{m.service != nil, "v1 Service", m.checkService},
		{m.pdb != nil, "policy/v1 PodDisruptionBudget", m.checkPDB},
		{m.secret != nil, "v1 Secret", m.checkSecret},
	} {
		if !c.present {
			errs = append(errs, fmt.Errorf("kustomization.yaml: no %s among the resources", c.what))
			continue
		}
		errs = append(errs, c.check()...)
	}
	return errors.Join(errs...)
}

func inFile(file string, list field.ErrorList) []error {
	errs := make([]error, 0, len(list))
	for _, e := range list {
		errs = append(errs, fmt.Errorf("%s: %w", file, e))
	}
	return errs
}

// apiErrs turns apimachinery's messages on the field at where in file into errors that name both.
func apiErrs(file, where string, msgs []string) []error {
	errs := make([]error, len(msgs))
	for i, msg := range msgs {
		errs[i] = fmt.Errorf("%s: %s: %s", file, where, msg)
	}
	return errs
}

// meta checks an object's metadata as the API server would on creation. Once built, a namespaced
// object has kustomization.yaml's namespace.
func (m *manifests) meta(file string, om *metav1.ObjectMeta, namespaced bool, name apivalidation.ValidateNameFunc) []error {
	return inFile(file, apivalidation.ValidateObjectMeta(om, namespaced && m.built, name, field.NewPath("metadata")))
}

func (m *manifests) checkNamespace() []error {
	f := m.files["v1/Namespace"]
	errs := m.meta(f, &m.namespace.ObjectMeta, false, apivalidation.NameIsDNSLabel)
	if ns := m.kustomization.Namespace; m.namespace.Name != ns {
		errs = append(errs, fmt.Errorf("%s: metadata.name: got %q, want kustomization.yaml's namespace %q", f, m.namespace.Name, ns))
	}
	return errs
}

func (m *manifests) checkConfigMap() []error {
	f := m.files["v1/ConfigMap"]
	errs := m.meta(f, &m.configMap.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	for k := range m.configMap.Data {
		errs = append(errs, apiErrs(f, "data."+k, validation.IsConfigMapKey(k))...)
	}
	prof, ok := m.configMap.Data["profiles.yaml"]
	if !ok {
		return append(errs, fmt.Errorf("%s: data: no profiles.yaml", f))
	}
	// Here only that it is YAML; mcp-router's own loader checks the rest.
	var v map[string]any
	if err := yaml.Unmarshal([]byte(prof), &v); err != nil {
		errs = append(errs, fmt.Errorf("%s: data.profiles.yaml: %w", f, err))
	}
	return errs
}

func (m *manifests) checkSecret() []error {
	f := secretExample
	s := m.secret
	var errs []error
	if s.Name == "" {
		errs = append(errs, fmt.Errorf("%s: metadata.name: empty", f))
	}
	for k := range secretKeys(s) {
		errs = append(errs, apiErrs(f, k, validation.IsConfigMapKey(k))...)
	}
	return errs
}

func secretKeys(s *corev1.Secret) map[string]bool {
	keys := map[string]bool{}
	for k := range s.Data {
		keys[k] = true
	}
	for k := range s.StringData {
		keys[k] = true
	}
	return keys
}

// podLabels are the labels of the Deployment's pods; nil without one.
func (m *manifests) podLabels() labels.Set {
	if m.deployment == nil {
		return nil
	}
	return labels.Set(m.deployment.Spec.Template.Labels)
}

// selects checks that a selector is valid and picks the Deployment's pods.
func (m *manifests) selects(file string, fp *field.Path, sel *metav1.LabelSelector) []error {
	if sel == nil {
		return []error{fmt.Errorf("%s: %s: missing", file, fp)}
	}
	errs := inFile(file, metavalidation.ValidateLabelSelector(sel, metavalidation.LabelSelectorValidationOptions{}, fp))
	s, err := metav1.LabelSelectorAsSelector(sel)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("%s: %s: %w", file, fp, err))
	case s.Empty():
		errs = append(errs, fmt.Errorf("%s: %s: empty, it would select every pod", file, fp))
	case m.podLabels() != nil && !s.Matches(m.podLabels()):
		errs = append(errs, fmt.Errorf("%s: %s: %s does not select the Deployment's pods (labels %s)", file, fp, s, m.podLabels()))
	}
	return errs
}

func (m *manifests) checkService() []error {
	f := m.files["v1/Service"]
	svc := m.service
	errs := m.meta(f, &svc.ObjectMeta, true, apivalidation.NameIsDNS1035Label)
	fp := field.NewPath("spec")
	errs = append(errs, m.selects(f, fp.Child("selector"), &metav1.LabelSelector{MatchLabels: svc.Spec.Selector})...)
	if len(svc.Spec.Ports) == 0 {
		errs = append(errs, fmt.Errorf("%s: spec.ports: none", f))
	}
	for i, p := range svc.Spec.Ports {
		pp := fp.Child("ports").Index(i)
		errs = append(errs, apiErrs(f, pp.String()+".port", validation.IsValidPortNum(int(p.Port)))...)
		target := p.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(p.Port) // the API's default
		}
		if m.deployment != nil && m.containerPort(target) == nil {
			errs = append(errs, fmt.Errorf("%s: %s.targetPort: %s is not a port of the Deployment's container", f, pp, target.String()))
		}
	}
	return errs
}

func (m *manifests) checkPDB() []error {
	f := m.files["policy/v1/PodDisruptionBudget"]
	pdb := m.pdb
	errs := m.meta(f, &pdb.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	fp := field.NewPath("spec")
	errs = append(errs, m.selects(f, fp.Child("selector"), pdb.Spec.Selector)...)
	if (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
		return append(errs, fmt.Errorf("%s: spec: want exactly one of minAvailable and maxUnavailable", f))
	}
	if m.deployment == nil || m.deployment.Spec.Replicas == nil {
		return errs
	}
	// A budget that allows no disruption blocks every node drain.
	replicas := int(*m.deployment.Spec.Replicas)
	if v := pdb.Spec.MinAvailable; v != nil {
		n, err := intstr.GetScaledValueFromIntOrPercent(v, replicas, true)
		if err != nil || n >= replicas {
			errs = append(errs, fmt.Errorf("%s: spec.minAvailable: %s of %d replicas leaves no pod to evict (want fewer than the replicas)", f, v.String(), replicas))
		}
	}
	if v := pdb.Spec.MaxUnavailable; v != nil {
		n, err := intstr.GetScaledValueFromIntOrPercent(v, replicas, false)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("%s: spec.maxUnavailable: %s of %d replicas allows no eviction", f, v.String(), replicas))
		}
	}
	return errs
}

// container is the Deployment's mcp-router container; nil without one.
func (m *manifests) container() *corev1.Container {
	if m.deployment == nil || len(m.deployment.Spec.Template.Spec.Containers) == 0 {
		return nil
	}
	return &m.deployment.Spec.Template.Spec.Containers[0]
}

func (m *manifests) containerPort(p intstr.IntOrString) *corev1.ContainerPort {
	c := m.container()
	if c == nil {
		return nil
	}
	for i, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return &c.Ports[i]
		}
	}
	return nil
}

func (m *manifests) checkDeployment() []error {
	f := m.files["apps/v1/Deployment"]
	d := m.deployment
	errs := m.meta(f, &d.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	sp := field.NewPath("spec")
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		errs = append(errs, fmt.Errorf("%s: spec.replicas: want at least 2 for a replicated gateway", f))
	}
	tp := sp.Child("template")
	errs = append(errs, inFile(f, metavalidation.ValidateLabels(d.Spec.Template.Labels, tp.Child("metadata", "labels")))...)
	errs = append(errs, m.selects(f, sp.Child("selector"), d.Spec.Selector)...)
	pod := &d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		return append(errs, fmt.Errorf("%s: %s: got %d containers, want 1", f, tp.Child("spec", "containers"), len(pod.Containers)))
	}
	cp := tp.Child("spec", "containers").Index(0)
	c := &pod.Containers[0]
	errs = append(errs, m.checkPorts(f, cp, c)...)
	errs = append(errs, m.checkProbe(f, cp.Child("readinessProbe"), c.ReadinessProbe, "/readyz")...)
	errs = append(errs, m.checkProbe(f, cp.Child("livenessProbe"), c.LivenessProbe, "/healthz")...)
	errs = append(errs, checkSecurity(f, tp.Child("spec"), pod, c)...)
	errs = append(errs, checkResources(f, cp.Child("resources"), c.Resources)...)
	errs = append(errs, m.checkEnv(f, cp.Child("env"), c.Env)...)
	errs = append(errs, m.checkVolumes(f, tp.Child("spec"), pod, c)...)
	return errs
}

// checkPorts wants a named port that serve --http listens on.
func (m *manifests) checkPorts(f string, cp *field.Path, c *corev1.Container) []error {
	var errs []error
	for i, p := range c.Ports {
		pp := cp.Child("ports").Index(i)
		errs = append(errs, apiErrs(f, pp.String()+".containerPort", validation.IsValidPortNum(int(p.ContainerPort)))...)
		if p.Name != "" {
			errs = append(errs, apiErrs(f, pp.String()+".name", validation.IsValidPortName(p.Name))...)
		}
	}
	i := slices.Index(c.Args, "--http")
	if len(c.Args) == 0 || c.Args[0] != "serve" || i < 0 || i+1 >= len(c.Args) {
		return append(errs, fmt.Errorf("%s: %s: got %q, want serve --http ADDR", f, cp.Child("args"), c.Args))
	}
	_, port, err := net.SplitHostPort(c.Args[i+1])
	n, _ := strconv.Atoi(port)
	if err != nil || m.containerPort(intstr.FromInt32(int32(n))) == nil {
		errs = append(errs, fmt.Errorf("%s: %s: serve --http %s does not listen on a declared container port", f, cp.Child("args"), c.Args[i+1]))
	}
	return errs
}

// checkProbe wants an HTTP GET of path on a container port, with a Host header the gateway's Host
// check lets through: the kubelet would otherwise send the pod's IP, which it refuses with 403.
func (m *manifests) checkProbe(f string, fp *field.Path, p *corev1.Probe, want string) []error {
	if p == nil || p.HTTPGet == nil {
		return []error{fmt.Errorf("%s: %s.httpGet: missing, want GET %s", f, fp, want)}
	}
	g := p.HTTPGet
	hp := fp.Child("httpGet")
	var errs []error
	if g.Path != want {
		errs = append(errs, fmt.Errorf("%s: %s.path: got %q, want %q", f, hp, g.Path, want))
	}
	if g.Scheme != "" && g.Scheme != corev1.URISchemeHTTP {
		errs = append(errs, fmt.Errorf("%s: %s.scheme: got %s, want HTTP (serve --http is plain HTTP)", f, hp, g.Scheme))
	}
	if m.containerPort(g.Port) == nil {
		errs = append(errs, fmt.Errorf("%s: %s.port: %s is not a port of the container", f, hp, g.Port.String()))
	}
	host := ""
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			host = h.Value
		}
	}
	if !loopbackHost(host) {
		errs = append(errs, fmt.Errorf("%s: %s.httpHeaders: Host %q, want localhost or a loopback IP, which the gateway's Host check always allows", f, hp, host))
	}
	return errs
}

// loopbackHost is the gateway's own rule for a Host it always allows.
func loopbackHost(h string) bool {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.Trim(strings.ToLower(h), "[]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkSecurity wants a non-root container with no privileges on a read-only root file system (the
// restricted Pod Security Standard).
func checkSecurity(f string, pp *field.Path, pod *corev1.PodSpec, c *corev1.Container) []error {
	var errs []error
	ps := cmp.Or(pod.SecurityContext, &corev1.PodSecurityContext{})
	cs := cmp.Or(c.SecurityContext, &corev1.SecurityContext{})
	csp := pp.Child("containers").Index(0).Child("securityContext")
	nonRoot, uid := cmp.Or(cs.RunAsNonRoot, ps.RunAsNonRoot), cmp.Or(cs.RunAsUser, ps.RunAsUser)
	if nonRoot == nil || !*nonRoot {
		errs = append(errs, fmt.Errorf("%s: %s.runAsNonRoot: want true", f, pp.Child("securityContext")))
	}
	if uid != nil && *uid == 0 {
		errs = append(errs, fmt.Errorf("%s: runAsUser: 0 is root", f))
	}
	if cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem {
		errs = append(errs, fmt.Errorf("%s: %s.readOnlyRootFilesystem: want true", f, csp))
	}
	if cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation {
		errs = append(errs, fmt.Errorf("%s: %s.allowPrivilegeEscalation: want false", f, csp))
	}
	if cs.Privileged != nil && *cs.Privileged {
		errs = append(errs, fmt.Errorf("%s: %s.privileged: want false", f, csp))
	}
	if cs.Capabilities == nil || !slices.Contains(cs.Capabilities.Drop, "ALL") || len(cs.Capabilities.Add) > 0 {
		errs = append(errs, fmt.Errorf("%s: %s.capabilities: want drop [ALL] and nothing added", f, csp))
	}
	return errs
}

// checkResources wants requests for scheduling and a memory limit.
func checkResources(f string, fp *field.Path, r corev1.ResourceRequirements) []error {
	var errs []error
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := r.Requests[name]; !ok || q.Sign() <= 0 {
			errs = append(errs, fmt.Errorf("%s: %s.requests.%s: want a positive quantity", f, fp, name))
		}
	}
	lim, ok := r.Limits[corev1.ResourceMemory]
	if !ok || lim.Sign() <= 0 {
		return append(errs, fmt.Errorf("%s: %s.limits.memory: want a positive quantity", f, fp))
	}
	if req, ok := r.Requests[corev1.ResourceMemory]; ok && lim.Cmp(req) < 0 {
		errs = append(errs, fmt.Errorf("%s: %s.limits.memory: %s is below the request %s", f, fp, lim.String(), req.String()))
	}
	return errs
}

// checkEnv wants valid names, each given once, and secrets that the example Secret holds.
func (m *manifests) checkEnv(f string, fp *field.Path, env []corev1.EnvVar) []error {
	var errs []error
	seen := map[string]bool{}
	for i, e := range env {
		ep := fp.Index(i)
		errs = append(errs, apiErrs(f, ep.String()+".name", validation.IsEnvVarName(e.Name))...)
		if seen[e.Name] {
			errs = append(errs, fmt.Errorf("%s: %s.name: %s given twice", f, ep, e.Name))
		}
		seen[e.Name] = true
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || m.secret == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref.Name != m.secret.Name {
			errs = append(errs, fmt.Errorf("%s: %s.valueFrom.secretKeyRef.name: %q is not the Secret of %s (%q)", f, ep, ref.Name, secretExample, m.secret.Name))
		} else if !secretKeys(m.secret)[ref.Key] {
			errs = append(errs, fmt.Errorf("%s: %s.valueFrom.secretKeyRef.key: %s has no key %q", f, ep, secretExample, ref.Key))
		}
	}
	if !seen["MCP_ROUTER_TOKEN"] {
		// serve --http on 0.0.0.0 refuses to start without a bearer token.
		errs = append(errs, fmt.Errorf("%s: %s: no MCP_ROUTER_TOKEN, the bearer token profiles.yaml reads", f, fp))
	}
	return errs
}

// checkVolumes wants every mount backed by a volume, the ConfigMap's profiles.yaml where
// MCP_ROUTER_CONFIG points, and the image's writable directories mounted.
func (m *manifests) checkVolumes(f string, pp *field.Path, pod *corev1.PodSpec, c *corev1.Container) []error {
	var errs []error
	vols := map[string]*corev1.Volume{}
	for i := range pod.Volumes {
		v := &pod.Volumes[i]
		vols[v.Name] = v
		if cm := v.ConfigMap; cm != nil && m.configMap != nil {
			vp := pp.Child("volumes").Index(i).Child("configMap")
			if cm.Name != m.configMap.Name {
				errs = append(errs, fmt.Errorf("%s: %s.name: %q is not the ConfigMap (%q)", f, vp, cm.Name, m.configMap.Name))
			}
			for j, it := range cm.Items {
				if _, ok := m.configMap.Data[it.Key]; !ok {
					errs = append(errs, fmt.Errorf("%s: %s.items[%d].key: the ConfigMap has no %q", f, vp, j, it.Key))
				}
			}
		}
	}
	mounts := map[string]string{} // mount path to volume name
	for i, vm := range c.VolumeMounts {
		if vols[vm.Name] == nil {
			errs = append(errs, fmt.Errorf("%s: %s.name: no volume %q", f, pp.Child("containers").Index(0).Child("volumeMounts").Index(i), vm.Name))
		}
		mounts[path.Clean(vm.MountPath)] = vm.Name
	}
	for _, dir := range writableDirs {
		if v := vols[mounts[dir]]; v == nil || v.EmptyDir == nil && v.PersistentVolumeClaim == nil {
			errs = append(errs, fmt.Errorf("%s: %s: %s must be a writable mount (emptyDir or a claim): the root file system is read-only", f, pp.Child("volumes"), dir))
		}
	}
	return append(errs, m.checkConfigPath(f, c, vols, mounts)...)
}

// checkConfigPath follows MCP_ROUTER_CONFIG to the ConfigMap's profiles.yaml.
func (m *manifests) checkConfigPath(f string, c *corev1.Container, vols map[string]*corev1.Volume, mounts map[string]string) []error {
	cfg := "/etc/mcp-router/profiles.yaml" // the image's default
	for _, e := range c.Env {
		if e.Name == "MCP_ROUTER_CONFIG" {
			cfg = e.Value
		}
	}
	v := vols[mounts[path.Dir(cfg)]]
	if v == nil || v.ConfigMap == nil {
		return []error{fmt.Errorf("%s: the config %s is not in a mounted ConfigMap", f, cfg)}
	}
	key := path.Base(cfg)
	for _, it := range v.ConfigMap.Items {
		if it.Path == key {
			key = it.Key
		}
	}
	if key != "profiles.yaml" {
		return []error{fmt.Errorf("%s: the config %s is the ConfigMap's %q, want its profiles.yaml", f, cfg, key)}
	}
	return nil
}
