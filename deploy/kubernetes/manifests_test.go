package kubernetes

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// object is one manifest document: its kind and the file it came from.
type object struct {
	file, kind, name string
	raw              []byte
}

// load splits every YAML file of this folder into its documents.
func load(t *testing.T) []object {
	t.Helper()
	files, _ := filepath.Glob("*.yaml")
	var out []object
	for _, f := range files {
		if f == "kustomization.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if head.Kind == "" {
				continue
			}
			out = append(out, object{file: f, kind: head.APIVersion + "/" + head.Kind, name: head.Metadata.Name, raw: doc})
		}
	}
	return out
}

// decode strictly: an unknown or misspelt field, or a wrong type, is an error.
func decode[T any](t *testing.T, o object) *T {
	t.Helper()
	v := new(T)
	if err := yaml.UnmarshalStrict(o.raw, v); err != nil {
		t.Fatalf("%s: %s %s: %v", o.file, o.kind, o.name, err)
	}
	return v
}

// TestManifests decodes every manifest into the Kubernetes API's types,
// strictly, and checks what a schema cannot: selectors match the pods,
// probes reach a declared port at a2aflow's health routes, the PDBs and
// HPAs point at the Deployments, every ConfigMap and Secret referenced exists.
func TestManifests(t *testing.T) {
	objs := load(t)
	deployments := map[string]*appsv1.Deployment{}
	configMaps, secrets := map[string]bool{}, map[string]bool{}
	var services []*corev1.Service
	var pdbs []*policyv1.PodDisruptionBudget
	var hpas []*autoscalingv2.HorizontalPodAutoscaler
	for _, o := range objs {
		if errs := validation.IsDNS1123Subdomain(o.name); len(errs) > 0 {
			t.Errorf("%s: name %q: %v", o.file, o.name, errs)
		}
		switch o.kind {
		case "apps/v1/Deployment":
			deployments[o.name] = decode[appsv1.Deployment](t, o)
		case "v1/Service":
			services = append(services, decode[corev1.Service](t, o))
		case "v1/ConfigMap":
			decode[corev1.ConfigMap](t, o)
			configMaps[o.name] = true
		case "v1/Secret":
			decode[corev1.Secret](t, o)
			secrets[o.name] = true
		case "policy/v1/PodDisruptionBudget":
			pdbs = append(pdbs, decode[policyv1.PodDisruptionBudget](t, o))
		case "autoscaling/v2/HorizontalPodAutoscaler":
			hpas = append(hpas, decode[autoscalingv2.HorizontalPodAutoscaler](t, o))
		default:
			t.Errorf("%s: unexpected %s %s", o.file, o.kind, o.name)
		}
	}
	for _, name := range []string{"a2aflow-api", "a2aflow-worker"} {
		if deployments[name] == nil {
			t.Fatalf("no Deployment %s", name)
		}
	}
	for name, d := range deployments {
		checkDeployment(t, name, d, configMaps, secrets)
	}
	if len(services) != 1 || !selects(services[0].Spec.Selector, deployments["a2aflow-api"]) {
		t.Errorf("want one Service selecting the api pods, got %d", len(services))
	}
	for _, s := range services {
		for _, p := range s.Spec.Ports {
			if !hasPort(deployments["a2aflow-api"], p.TargetPort.String()) {
				t.Errorf("Service %s targets port %s, which the api does not declare", s.Name, p.TargetPort.String())
			}
		}
	}
	covered := map[string]bool{}
	for _, p := range pdbs {
		sel, err := metaSelector(p.Spec.Selector.MatchLabels)
		if err != nil {
			t.Fatal(err)
		}
		for name, d := range deployments {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				covered[name] = true
				if p.Spec.MinAvailable == nil || p.Spec.MinAvailable.IntValue() >= int(*d.Spec.Replicas) {
					t.Errorf("PDB %s: minAvailable %v leaves no pod of %s (%d replicas) to evict", p.Name, p.Spec.MinAvailable, name, *d.Spec.Replicas)
				}
			}
		}
	}
	scaled := map[string]bool{}
	for _, h := range hpas {
		ref := h.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || deployments[ref.Name] == nil {
			t.Errorf("HPA %s scales %s %s, not one of the Deployments", h.Name, ref.Kind, ref.Name)
			continue
		}
		if len(h.Spec.Metrics) != 1 || h.Spec.Metrics[0].Resource == nil || h.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
			t.Errorf("HPA %s: want one CPU metric", h.Name)
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 {
			t.Errorf("HPA %s: minReplicas below 2 would undo the PDB", h.Name)
		}
		// A CPU utilization target needs the pods' CPU requests.
		for _, c := range deployments[ref.Name].Spec.Template.Spec.Containers {
			if c.Resources.Requests.Cpu().IsZero() {
				t.Errorf("HPA %s: container %s has no CPU request", h.Name, c.Name)
			}
		}
		scaled[ref.Name] = true
	}
	for name := range deployments {
		if !covered[name] {
			t.Errorf("no PodDisruptionBudget covers %s", name)
		}
		if !scaled[name] {
			t.Errorf("no HorizontalPodAutoscaler scales %s", name)
		}
	}
}

func checkDeployment(t *testing.T, name string, d *appsv1.Deployment, configMaps, secrets map[string]bool) {
	t.Helper()
	if !selects(d.Spec.Selector.MatchLabels, d) {
		t.Errorf("%s: selector %v does not match its pod labels %v", name, d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("%s: want at least 2 replicas", name)
	}
	spec := d.Spec.Template.Spec
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	for _, c := range spec.Containers {
		if len(c.Args) == 0 || (c.Args[0] != "api" && c.Args[0] != "worker") {
			t.Errorf("%s: container %s runs %v, want a2aflow api or worker", name, c.Name, c.Args)
		}
		for probe, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
			wantPath := map[string]string{"liveness": "/healthz", "readiness": "/readyz"}[probe]
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != wantPath {
				t.Errorf("%s: %s probe %+v, want GET %s", name, probe, p, wantPath)
				continue
			}
			if !hasPort(d, p.HTTPGet.Port.String()) {
				t.Errorf("%s: %s probe port %s is not a declared port", name, probe, p.HTTPGet.Port.String())
			}
		}
		// The port the process listens on is the one declared.
		for _, port := range c.Ports {
			flag := map[string]string{"api": "--http-addr", "worker": "--health-addr"}[c.Args[0]]
			if !strings.Contains(strings.Join(c.Args, " "), fmt.Sprintf("%s :%d", flag, port.ContainerPort)) {
				t.Errorf("%s: port %d is not what %s listens on (%v)", name, port.ContainerPort, flag, c.Args)
			}
		}
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil && !configMaps[e.ConfigMapRef.Name] {
				t.Errorf("%s: ConfigMap %s is not in the manifests", name, e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil && !secrets[e.SecretRef.Name] {
				t.Errorf("%s: Secret %s is not in the manifests", name, e.SecretRef.Name)
			}
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				t.Errorf("%s: mount of unknown volume %s", name, m.Name)
			}
		}
		if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: container %s wants memory requests and limits", name, c.Name)
		}
	}
}

func selects(sel map[string]string, d *appsv1.Deployment) bool {
	s, err := metaSelector(sel)
	return err == nil && len(sel) > 0 && s.Matches(labels.Set(d.Spec.Template.Labels))
}

func metaSelector(m map[string]string) (labels.Selector, error) {
	return labels.ValidatedSelectorFromSet(m)
}

func hasPort(d *appsv1.Deployment, port string) bool {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == port || fmt.Sprint(p.ContainerPort) == port {
				return true
			}
		}
	}
	return false
}

// TestStrictDecodingCatchesMistakes shows the check fails on what a schema
// validator catches: a misspelt field and a wrong type.
func TestStrictDecodingCatchesMistakes(t *testing.T) {
	for _, bad := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replica: 2}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: two}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 80, targetPort: http, protocl: TCP}]}\n",
	} {
		var err error
		if strings.Contains(bad, "Service") {
			err = yaml.UnmarshalStrict([]byte(bad), new(corev1.Service))
		} else {
			err = yaml.UnmarshalStrict([]byte(bad), new(appsv1.Deployment))
		}
		if err == nil {
			t.Errorf("strict decoding took %q", bad)
		}
	}
}
