package helm

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const chartDir = "a2aflow"

// valueSets are the three deployments the chart is rendered for: its
// defaults; a production one (an existing Secret, Temporal over mutual
// TLS, an Ingress with TLS, a ServiceMonitor, a config file); Temporal
// Cloud (an API key from a Secret, secrets and LLM keys from the values,
// one replica, no PDB).
var valueSets = map[string]string{
	"defaults": ``,
	"production": `
secrets:
  existingSecret: a2aflow-secrets
temporal:
  address: temporal-frontend.temporal:7233
  namespace: agents
  tls:
    enabled: true
    serverName: temporal-frontend
    secretName: temporal-client-tls
ingress:
  enabled: true
  className: nginx
  hosts: [{host: agents.example.com, paths: ["/"]}]
  tls: [{secretName: agents-tls, hosts: [agents.example.com]}]
serviceMonitor:
  enabled: true
  labels: {release: prometheus}
config: |
  [[agents]]
  name = "helper"
  system-prompt = "You help."
  provider = "gemini"
api:
  replicas: 3
  resources: {requests: {cpu: "1", memory: 256Mi}, limits: {memory: 1Gi}}
env:
  OTEL_EXPORTER_OTLP_ENDPOINT: http://otel-collector.observability:4318
`,
	"temporal-cloud": `
temporal:
  address: agents.a1b2c.tmprl.cloud:7233
  namespace: agents.a1b2c
  tls: {enabled: true}
  apiKey: {secretName: temporal-cloud, secretKey: key}
secrets:
  secretsKey: MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=
  database: postgres://a2aflow:pw@postgres:5432/a2aflow?sslmode=require
  extra: {GEMINI_API_KEY: AIza-example}
api: {replicas: 1}
worker: {replicas: 1}
podDisruptionBudget: {enabled: false}
ingress:
  enabled: true
  hosts: [{host: agents.internal}]
`,
}

// render is helm template of the chart with the value set's YAML: the
// manifests by template file.
func render(t *testing.T, valuesYAML string) map[string]string {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValues([]byte(valuesYAML))
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{Name: "a2aflow", Namespace: "a2aflow", IsInstall: true},
		chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(chrt, rv)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	return out
}

// TestLint is helm lint --strict of the chart for each value set: no
// error, no warning.
func TestLint(t *testing.T) {
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(values))
			if err != nil {
				t.Fatal(err)
			}
			l := lint.All(chartDir, vals, "a2aflow", true)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

// manifest is one rendered document.
type manifest struct {
	file, kind, name string
	raw              []byte
}

func documents(t *testing.T, rendered map[string]string) []manifest {
	t.Helper()
	files := make([]string, 0, len(rendered))
	for f := range rendered {
		files = append(files, f)
	}
	sort.Strings(files)
	var out []manifest
	for _, f := range files {
		if !strings.HasSuffix(f, ".yaml") {
			continue
		}
		for _, doc := range bytes.Split([]byte(rendered[f]), []byte("\n---")) {
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s: not YAML: %v\n%s", f, err, doc)
			}
			if head.Kind == "" {
				continue
			}
			out = append(out, manifest{file: f, kind: head.APIVersion + "/" + head.Kind, name: head.Metadata.Name, raw: doc})
		}
	}
	return out
}

func decode[T any](t *testing.T, m manifest) *T {
	t.Helper()
	v := new(T)
	if err := yaml.UnmarshalStrict(m.raw, v); err != nil {
		t.Fatalf("%s: %s %s: %v\n%s", m.file, m.kind, m.name, err, m.raw)
	}
	return v
}

// TestTemplate renders the chart for each value set (helm template) and
// decodes every manifest strictly into the Kubernetes API's types (an
// unknown or misspelt field, a wrong type fail), then checks what a schema
// cannot: each Deployment's selector matches its pods and a Service and a
// PDB select them, the probes reach /healthz and /readyz on a declared
// port, the Secrets, ConfigMaps and Services referenced exist (or are the
// operator's, named in the values), the Temporal connection's settings
// reach the pods.
func TestTemplate(t *testing.T) {
	external := map[string]bool{"a2aflow-secrets": true, "temporal-client-tls": true, "temporal-cloud": true, "agents-tls": true}
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			docs := documents(t, render(t, values))
			kinds := map[string]int{}
			deployments := map[string]*appsv1.Deployment{}
			services := map[string]*corev1.Service{}
			secrets, configMaps := map[string]bool{}, map[string]bool{}
			var pdbs []*policyv1.PodDisruptionBudget
			var ingresses []*networkingv1.Ingress
			for _, m := range docs {
				kinds[m.kind]++
				switch m.kind {
				case "apps/v1/Deployment":
					deployments[m.name] = decode[appsv1.Deployment](t, m)
				case "v1/Service":
					services[m.name] = decode[corev1.Service](t, m)
				case "v1/Secret":
					decode[corev1.Secret](t, m)
					secrets[m.name] = true
				case "v1/ConfigMap":
					decode[corev1.ConfigMap](t, m)
					configMaps[m.name] = true
				case "v1/ServiceAccount":
					decode[corev1.ServiceAccount](t, m)
				case "policy/v1/PodDisruptionBudget":
					pdbs = append(pdbs, decode[policyv1.PodDisruptionBudget](t, m))
				case "networking.k8s.io/v1/Ingress":
					ingresses = append(ingresses, decode[networkingv1.Ingress](t, m))
				case "monitoring.coreos.com/v1/ServiceMonitor":
					checkServiceMonitor(t, m, services)
				default:
					t.Errorf("%s: unexpected kind %s", m.file, m.kind)
				}
			}
			if len(deployments) != 2 || deployments["a2aflow-api"] == nil || deployments["a2aflow-worker"] == nil {
				t.Fatalf("deployments %v, want a2aflow-api and a2aflow-worker", kinds)
			}
			for dname, d := range deployments {
				checkDeployment(t, dname, d, secrets, configMaps, external)
				selected := false
				for _, s := range services {
					if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
						selected = true
					}
				}
				if !selected {
					t.Errorf("no Service selects the pods of %s", dname)
				}
			}
			for _, p := range pdbs {
				d := deployments[p.Name]
				if d == nil || !labels.SelectorFromSet(p.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
					t.Errorf("PDB %s selects no Deployment's pods", p.Name)
				}
			}
			for _, ing := range ingresses {
				for _, r := range ing.Spec.Rules {
					for _, p := range r.HTTP.Paths {
						if s := services[p.Backend.Service.Name]; s == nil || s.Spec.Ports[0].Name != p.Backend.Service.Port.Name {
							t.Errorf("ingress %s: backend %+v is no Service port", ing.Name, p.Backend.Service)
						}
					}
				}
			}
			api := deployments["a2aflow-api"].Spec.Template.Spec.Containers[0]
			env := map[string]string{}
			for _, e := range api.Env {
				env[e.Name] = e.Value
			}
			switch name {
			case "defaults":
				if env["A2AFLOW_TEMPORAL_ADDR"] != "temporal-frontend.temporal.svc.cluster.local:7233" || env["A2AFLOW_TEMPORAL_TLS"] != "" {
					t.Errorf("defaults: env %v", env)
				}
			case "production":
				if env["A2AFLOW_TEMPORAL_TLS_CERT"] != "/etc/a2aflow/temporal-tls/tls.crt" || env["A2AFLOW_TEMPORAL_TLS_SERVER_NAME"] != "temporal-frontend" ||
					env["A2AFLOW_PUBLIC_URL"] != "https://agents.example.com" || env["A2AFLOW_NAMESPACE"] != "agents" ||
					!strings.Contains(strings.Join(api.Args, " "), "--config /etc/a2aflow/config/a2aflow.toml") {
					t.Errorf("production: args %v env %v", api.Args, env)
				}
			case "temporal-cloud":
				if env["A2AFLOW_TEMPORAL_API_KEY_FILE"] != "/etc/a2aflow/temporal-api-key/key" || env["A2AFLOW_TEMPORAL_TLS"] != "true" ||
					env["A2AFLOW_PUBLIC_URL"] != "http://agents.internal" || len(pdbs) != 0 {
					t.Errorf("temporal-cloud: env %v, %d PDBs", env, len(pdbs))
				}
			}
		})
	}
}

// checkDeployment checks a Deployment's selector, probes and references.
func checkDeployment(t *testing.T, name string, d *appsv1.Deployment, secrets, configMaps, external map[string]bool) {
	t.Helper()
	if d.Spec.Selector == nil || !labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("%s: its selector does not match its pods", name)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers", name, len(pod.Containers))
	}
	c := pod.Containers[0]
	ports := map[string]bool{}
	for _, p := range c.Ports {
		ports[p.Name] = true
	}
	for probe, path := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != path || !ports[probe.HTTPGet.Port.StrVal] {
			t.Errorf("%s: a probe %+v, want %s on a declared port", name, probe, path)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s: resources %+v", name, c.Resources)
	}
	for _, from := range c.EnvFrom {
		if from.SecretRef != nil && !secrets[from.SecretRef.Name] && !external[from.SecretRef.Name] {
			t.Errorf("%s: Secret %s is neither rendered nor the operator's", name, from.SecretRef.Name)
		}
	}
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounted[m.Name] = true
	}
	for _, v := range pod.Volumes {
		switch {
		case !mounted[v.Name]:
			t.Errorf("%s: volume %s is not mounted", name, v.Name)
		case v.Secret != nil && !secrets[v.Secret.SecretName] && !external[v.Secret.SecretName]:
			t.Errorf("%s: volume %s: Secret %s", name, v.Name, v.Secret.SecretName)
		case v.ConfigMap != nil && !configMaps[v.ConfigMap.Name]:
			t.Errorf("%s: volume %s: ConfigMap %s is not rendered", name, v.Name, v.ConfigMap.Name)
		}
	}
	want := "api"
	if strings.HasSuffix(name, "worker") {
		want = "worker"
	}
	if len(c.Args) == 0 || c.Args[0] != want {
		t.Errorf("%s: args %v, want a2aflow %s", name, c.Args, want)
	}
}

// checkServiceMonitor checks a ServiceMonitor (no type of k8s.io/api):
// its known fields only, and endpoints on ports of the Services it selects.
func checkServiceMonitor(t *testing.T, m manifest, services map[string]*corev1.Service) {
	t.Helper()
	var sm struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Endpoints []struct {
				Port     string `json:"port"`
				Path     string `json:"path"`
				Interval string `json:"interval"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(m.raw, &sm); err != nil {
		t.Fatalf("ServiceMonitor: %v", err)
	}
	ports := map[string]bool{}
	for _, s := range services {
		if labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(s.Labels)) {
			for _, p := range s.Spec.Ports {
				ports[p.Name] = true
			}
		}
	}
	for _, e := range sm.Spec.Endpoints {
		if !ports[e.Port] || e.Path != "/metrics" {
			t.Errorf("ServiceMonitor endpoint %+v: no selected Service has port %s (%v)", e, e.Port, ports)
		}
	}
	if len(sm.Spec.Endpoints) != 2 {
		t.Errorf("ServiceMonitor endpoints %+v, want the api's and the worker's", sm.Spec.Endpoints)
	}
	_ = fmt.Sprint
}

// TestStrictDecodingCatchesMistakes: the check itself fails a misspelt
// field, as a manifest with one would fail at kubectl apply.
func TestStrictDecodingCatchesMistakes(t *testing.T) {
	var d appsv1.Deployment
	err := yaml.UnmarshalStrict([]byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  replica: 2\n"), &d)
	if err == nil {
		t.Fatal("a misspelt field (replica) decoded without error")
	}
}
