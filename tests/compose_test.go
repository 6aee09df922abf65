package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/server/common/dynamicconfig"
	"gopkg.in/yaml.v3"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// composeFile is the scaled-out deployment checked by TestDockerComposeConfig.
const composeFile = "../docker-compose.yml"

// composeProject is the part of `docker compose config --format json` the
// test reads.
type composeProject struct {
	Services map[string]composeService `json:"services"`
}

type composeService struct {
	Image       string             `json:"image"`
	Build       *json.RawMessage   `json:"build"`
	Command     []string           `json:"command"`
	Environment map[string]*string `json:"environment"`
	Ports       []struct {
		Target    int    `json:"target"`
		Published any    `json:"published"` // a string in compose v2, a number in some versions
		HostIP    string `json:"host_ip"`
	} `json:"ports"`
	Volumes []struct {
		Type   string `json:"type"`
		Source string `json:"source"`
		Target string `json:"target"`
	} `json:"volumes"`
	DependsOn map[string]struct {
		Condition string `json:"condition"`
	} `json:"depends_on"`
	Entrypoint  []string `json:"entrypoint"`
	Restart     string   `json:"restart"`
	Profiles    []string `json:"profiles"`
	Healthcheck *struct {
		Test    []string `json:"test"`
		Disable bool     `json:"disable"`
	} `json:"healthcheck"`
	StopGracePeriod string `json:"stop_grace_period"`
}

func (s composeService) env(key string) string {
	if v := s.Environment[key]; v != nil {
		return *v
	}
	return ""
}

// TestDockerComposeConfig checks docker-compose.yml with `docker compose
// config`, which parses, validates and interpolates it without a Docker
// engine: the services of the scaled-out deployment exist, Temporal runs as
// Temporal documents it (server image, schema and namespace jobs), every
// long-running service has a healthcheck (api and worker: /readyz), the
// OTel collector is an optional profile, api and worker run the right
// commands against the temporal service, every image is pinned, and every
// A2AFLOW_* variable it sets is one the binary reads.
func TestDockerComposeConfig(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("docker is not on PATH")
	}
	if out, err := exec.Command("docker", "compose", "version").CombinedOutput(); err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		t.Skipf("docker compose is not available: %v: %s", err, first)
	}

	// Every service, the otel profile's included; and without the profile,
	// to check that the collector is optional.
	project := composeConfig(t, "--profile", "otel")
	if _, ok := composeConfig(t).Services["otel-collector"]; ok {
		t.Error("otel-collector runs without --profile otel; it should be optional")
	}
	// An .env of an earlier release, its key under the deprecated name.
	if got := composeConfigEnv(t, []string{"A2AFLOW_PUSH_KEY=" + harness.SecretsKey}).Services["a2aflow-api"].env("A2AFLOW_SECRETS_KEY"); got != harness.SecretsKey {
		t.Errorf("with A2AFLOW_PUSH_KEY only, the api's A2AFLOW_SECRETS_KEY is %q", got)
	}

	for _, name := range []string{"postgresql", "temporal-schema", "temporal", "temporal-namespace", "temporal-ui",
		"a2aflow-api", "a2aflow-worker", "otel-collector"} {
		if _, ok := project.Services[name]; !ok {
			t.Errorf("service %q is missing; services: %v", name, serviceNames(project))
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The frontend is not published; the UI only on loopback.
	if temporal := project.Services["temporal"]; len(temporal.Ports) > 0 {
		t.Errorf("temporal service publishes %+v; its frontend has no authentication", temporal.Ports)
	}
	for _, p := range project.Services["temporal-ui"].Ports {
		if p.HostIP != "127.0.0.1" {
			t.Errorf("temporal-ui publishes %v on %q, want 127.0.0.1 only", p.Published, p.HostIP)
		}
	}

	// api and worker: the right command, dialling the temporal service.
	for name, want := range map[string]string{"a2aflow-api": "api", "a2aflow-worker": "worker"} {
		svc := project.Services[name]
		if len(svc.Command) != 1 || svc.Command[0] != want {
			t.Errorf("%s: command = %q, want [%q]", name, svc.Command, want)
		}
		if svc.Build == nil {
			t.Errorf("%s: has no build section; it should build this repository's Dockerfile", name)
		}
		addr := svc.env("A2AFLOW_TEMPORAL_ADDR")
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host != "temporal" || port != "7233" {
			t.Errorf("%s: A2AFLOW_TEMPORAL_ADDR = %q, want temporal:7233 (the temporal service)", name, addr)
		}
		if _, ok := svc.DependsOn["temporal"]; !ok {
			t.Errorf("%s: does not depend on the temporal service", name)
		}
	}
	api := project.Services["a2aflow-api"]
	if !publishes(api, 8080, "8080") {
		t.Errorf("a2aflow-api does not publish 8080:8080: %+v", api.Ports)
	}
	// The worker's SQLite records must live on a volume, not in the container.
	worker := project.Services["a2aflow-worker"]
	if dataDir := worker.env("A2AFLOW_DATA_DIR"); dataDir != "" {
		if !mounts(worker, dataDir) {
			t.Errorf("a2aflow-worker: no volume mounted at its A2AFLOW_DATA_DIR %s: %+v", dataDir, worker.Volumes)
		}
	} else if !mounts(worker, "/data") {
		t.Errorf("a2aflow-worker: no volume mounted at the image's data dir /data: %+v", worker.Volumes)
	}

	checkComposeTemporal(t, project)
	checkComposeHealth(t, project)

	// Every image is pinned: a tag other than latest, or a digest. Services
	// that build this repository may leave the image name to compose.
	for _, name := range serviceNames(project) {
		svc := project.Services[name]
		if svc.Image == "" {
			if svc.Build == nil {
				t.Errorf("%s: neither image nor build", name)
			}
			continue
		}
		if err := checkPinned(svc.Image); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	// Every A2AFLOW_* variable in the compose file, comments included, is one
	// the a2aflow binary reads.
	known := knownEnvVars(t)
	raw, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, v := range regexp.MustCompile(`A2AFLOW_[A-Z0-9_]+`).FindAllString(string(raw), -1) {
		used[v] = true
	}
	for _, svc := range project.Services {
		for k := range svc.Environment {
			if strings.HasPrefix(k, "A2AFLOW_") {
				used[k] = true
			}
		}
	}
	if len(used) == 0 {
		t.Error("docker-compose.yml sets no A2AFLOW_* variable at all")
	}
	for v := range used {
		if !known[v] {
			t.Errorf("docker-compose.yml uses %s, which a2aflow does not read (it reads %v)", v, sortedKeys(known))
		}
	}
}

// composeConfig runs `docker compose config` on the compose file with args
// and decodes its answer.
func composeConfig(t *testing.T, args ...string) composeProject {
	t.Helper()
	return composeConfigEnv(t, []string{"A2AFLOW_SECRETS_KEY=" + harness.SecretsKey}, args...)
}

// composeConfigEnv is composeConfig with env (the variables of an .env) set.
func composeConfigEnv(t *testing.T, env []string, args ...string) composeProject {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", append(append([]string{"compose", "-f", composeFile}, args...), "config", "--format", "json")...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker compose config %v: %v\n%s", args, err, stderr.String())
	}
	var project composeProject
	if err := json.Unmarshal(stdout.Bytes(), &project); err != nil {
		t.Fatalf("decode docker compose config output: %v\n%s", err, stdout.String())
	}
	return project
}

// checkComposeTemporal checks the Temporal services as Temporal documents
// them now that the auto-setup image is no longer built: temporalio/server,
// after a temporalio/admin-tools job of the same version that sets up the
// schemas with temporal-sql-tool, and a job registering the namespace
// before a2aflow's api and worker start.
func checkComposeTemporal(t *testing.T, project composeProject) {
	t.Helper()
	for _, name := range serviceNames(project) {
		if img := project.Services[name].Image; strings.Contains(img, "temporalio/auto-setup") {
			t.Errorf("%s: image %s is no longer built by Temporal; use temporalio/server with the admin-tools schema job", name, img)
		}
	}
	temporal, schema, namespace := project.Services["temporal"], project.Services["temporal-schema"], project.Services["temporal-namespace"]
	repo, version, _ := strings.Cut(temporal.Image, ":")
	if repo != "temporalio/server" {
		t.Errorf("temporal: image %s, want temporalio/server:<version>", temporal.Image)
	}
	for name, svc := range map[string]composeService{"temporal-schema": schema, "temporal-namespace": namespace} {
		if want := "temporalio/admin-tools:" + version; svc.Image != want {
			t.Errorf("%s: image %s, want %s (the server's version)", name, svc.Image, want)
		}
		if !strings.HasPrefix(svc.Restart, "on-failure") {
			t.Errorf("%s: restart %q, want on-failure[:n] (a one-shot job)", name, svc.Restart)
		}
	}
	wantAfter := func(name string, svc composeService, job string) {
		t.Helper()
		if got := svc.DependsOn[job].Condition; got != "service_completed_successfully" {
			t.Errorf("%s: depends on %s with condition %q, want service_completed_successfully", name, job, got)
		}
	}
	wantAfter("temporal", temporal, "temporal-schema")
	wantAfter("a2aflow-api", project.Services["a2aflow-api"], "temporal-namespace")
	wantAfter("a2aflow-worker", project.Services["a2aflow-worker"], "temporal-namespace")
	if got := namespace.DependsOn["temporal"].Condition; got != "service_healthy" {
		t.Errorf("temporal-namespace: depends on temporal with condition %q, want service_healthy", got)
	}

	// The schema job's script creates and migrates both databases with
	// temporal-sql-tool.
	script := mountedScript(t, "temporal-schema", schema)
	for _, want := range []string{"temporal-sql-tool", "create", "setup-schema", "update-schema",
		"setup temporal temporal", "setup temporal_visibility visibility", "postgresql/v12"} {
		if !strings.Contains(script, want) {
			t.Errorf("temporal-schema's script does not contain %q:\n%s", want, script)
		}
	}
	if !strings.Contains(mountedScript(t, "temporal-namespace", namespace), "temporal operator namespace create") {
		t.Error("temporal-namespace's script does not create the namespace")
	}
	if ns, want := namespace.env("NAMESPACE"), project.Services["a2aflow-api"].env("A2AFLOW_NAMESPACE"); ns != want {
		t.Errorf("temporal-namespace registers %q, a2aflow uses %q", ns, want)
	}

	// The server's dynamic config is mounted where DYNAMIC_CONFIG_FILE_PATH
	// says (the image has none), and the server reads it without an error or
	// an unknown key.
	path := temporal.env("DYNAMIC_CONFIG_FILE_PATH")
	var source string
	for _, v := range temporal.Volumes {
		if v.Target == path && v.Type == "bind" {
			source = v.Source
		}
	}
	if source == "" {
		t.Fatalf("temporal: DYNAMIC_CONFIG_FILE_PATH %q is not a mounted file: %+v", path, temporal.Volumes)
	}
	raw, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	loaded := dynamicconfig.LoadYamlFile(raw)
	for _, e := range append(loaded.Errors, loaded.Warnings...) {
		t.Errorf("temporal's dynamic config %s: %v", source, e)
	}
}

// mountedScript returns the script a job runs: its command's first word,
// mounted from this repository.
func mountedScript(t *testing.T, name string, svc composeService) string {
	t.Helper()
	if len(svc.Command) == 0 {
		t.Fatalf("%s: no command", name)
	}
	for _, v := range svc.Volumes {
		if v.Target == svc.Command[0] && v.Type == "bind" {
			raw, err := os.ReadFile(v.Source)
			if err != nil {
				t.Fatal(err)
			}
			return string(raw)
		}
	}
	t.Fatalf("%s: its command %s is not a file mounted from the repository: %+v", name, svc.Command[0], svc.Volumes)
	return ""
}

// noHealthcheck are the long-running services without a compose healthcheck,
// and why.
var noHealthcheck = map[string]string{
	"otel-collector": "its image has no shell or HTTP client; its health_check extension answers probes from outside",
}

// checkComposeHealth checks that every long-running service has a
// healthcheck (one-shot jobs, which others wait for to complete, need none),
// that api's and the worker's ask /readyz, and that docker stop gives them
// their shutdown timeout.
func checkComposeHealth(t *testing.T, project composeProject) {
	t.Helper()
	jobs := map[string]bool{}
	for _, svc := range project.Services {
		for dep, d := range svc.DependsOn {
			if d.Condition == "service_completed_successfully" {
				jobs[dep] = true
			}
		}
	}
	for _, name := range serviceNames(project) {
		svc := project.Services[name]
		hasCheck := svc.Healthcheck != nil && !svc.Healthcheck.Disable && len(svc.Healthcheck.Test) > 0
		switch {
		case jobs[name] && hasCheck:
			t.Errorf("%s: a one-shot job with a healthcheck", name)
		case jobs[name]:
		case noHealthcheck[name] != "":
			if hasCheck {
				t.Errorf("%s: has a healthcheck now: drop it from noHealthcheck", name)
			}
		case !hasCheck:
			t.Errorf("%s: no healthcheck", name)
		}
	}
	worker := project.Services["a2aflow-worker"]
	_, healthPort, err := net.SplitHostPort(worker.env("A2AFLOW_HEALTH_ADDR"))
	if err != nil {
		t.Errorf("a2aflow-worker: A2AFLOW_HEALTH_ADDR = %q: %v; the worker's healthcheck needs its health port", worker.env("A2AFLOW_HEALTH_ADDR"), err)
	}
	for name, want := range map[string]string{"a2aflow-api": ":8080/readyz", "a2aflow-worker": ":" + healthPort + "/readyz"} {
		svc := project.Services[name]
		if svc.Healthcheck == nil || !strings.Contains(strings.Join(svc.Healthcheck.Test, " "), want) {
			t.Errorf("%s: healthcheck does not ask %s: %+v", name, want, svc.Healthcheck)
		}
		shutdown, err := time.ParseDuration(svc.env("A2AFLOW_SHUTDOWN_TIMEOUT"))
		if err != nil {
			shutdown = 30 * time.Second // the default
		}
		grace, err := time.ParseDuration(svc.StopGracePeriod)
		if err != nil {
			grace = 10 * time.Second // docker's default
		}
		if grace <= shutdown {
			t.Errorf("%s: stop_grace_period %s is not above its shutdown timeout %s: docker stop would kill it mid-shutdown", name, grace, shutdown)
		}
	}
	if !slices.Contains(project.Services["otel-collector"].Profiles, "otel") {
		t.Errorf("otel-collector: profiles %v, want otel", project.Services["otel-collector"].Profiles)
	}
}

// TestDockerfileGoVersion checks that the Dockerfile's build image is at
// least the go version go.mod requires: the official golang images set
// GOTOOLCHAIN=local, so an older one cannot build the module.
func TestDockerfileGoVersion(t *testing.T) {
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)`).FindSubmatch(dockerfile)
	if m == nil {
		t.Fatal("Dockerfile has no ARG GO_VERSION=...")
	}
	image := string(m[1])
	if !regexp.MustCompile(`(?m)^FROM golang:\$\{GO_VERSION\}\S*`).Match(dockerfile) {
		t.Error("Dockerfile's build stage is not FROM golang:${GO_VERSION}...")
	}
	g := regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(gomod)
	if g == nil {
		t.Fatal("go.mod has no go line")
	}
	required := string(g[1])
	if compareVersions(image, required) < 0 {
		t.Errorf("Dockerfile builds with Go %s, older than go.mod's go %s: raise ARG GO_VERSION", image, required)
	}
}

// knownEnvVars returns the A2AFLOW_* names that internal/cli and its
// packages write as string literals (where each flag binds its variable),
// read from their non-test sources.
func knownEnvVars(t *testing.T) map[string]bool {
	t.Helper()
	var files []string
	err := filepath.WalkDir("../internal/cli", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"(A2AFLOW_[A-Z0-9_]+)"`)
	known := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(src, -1) {
			known[string(m[1])] = true
		}
	}
	if len(known) == 0 {
		t.Fatal("found no A2AFLOW_* variable in ../internal/cli")
	}
	return known
}

// checkPinned reports an image reference without a tag, or tagged latest.
// A digest (@sha256:...) pins it whatever the tag.
func checkPinned(ref string) error {
	if strings.Contains(ref, "@sha256:") {
		return nil
	}
	name := ref
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:] // a registry host:port is not a tag
	}
	i := strings.LastIndex(name, ":")
	if i < 0 {
		return fmt.Errorf("image %q has no tag: pin a version", ref)
	}
	if tag := name[i+1:]; tag == "" || tag == "latest" {
		return fmt.Errorf("image %q is not pinned: use a version tag, not %q", ref, tag)
	}
	return nil
}

func publishes(s composeService, target int, published string) bool {
	for _, p := range s.Ports {
		if p.Target == target && fmt.Sprint(p.Published) == published {
			return true
		}
	}
	return false
}

func mounts(s composeService, target string) bool {
	for _, v := range s.Volumes {
		if v.Target == target && (v.Type == "volume" || v.Type == "bind") {
			return true
		}
	}
	return false
}

func serviceNames(p composeProject) []string {
	names := make([]string, 0, len(p.Services))
	for n := range p.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compareVersions compares dotted Go versions such as 1.26 and 1.26.8
// (missing parts count as 0): -1, 0 or 1.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// TestComposeExposure reads docker-compose.yml itself, without Docker: the
// Temporal frontend is not published, the UI is published on the host's
// loopback only and read-only, its comment says how to put it behind a
// login, and nothing else but the A2A API is published beyond loopback.
func TestComposeExposure(t *testing.T) {
	raw, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Services map[string]struct {
			Ports       []yaml.Node       `yaml:"ports"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatalf("parse %s: %v", composeFile, err)
	}
	published := map[string][]string{} // service -> "host_ip:published:target"
	for name, svc := range file.Services {
		for _, p := range svc.Ports {
			published[name] = append(published[name], composePort(t, p))
		}
	}
	want := map[string][]string{
		"temporal-ui": {"127.0.0.1:8233:8080"},
		"a2aflow-api": {":8080:8080", ":9090:9090"}, // the HTTP API and its gRPC binding
		"grafana":     {"127.0.0.1:3000:3000"},      // the metrics profile's
	}
	if diff := cmp.Diff(want, published); diff != "" {
		t.Errorf("published ports, host_ip:published:target (-want +got):\n%s", diff)
	}
	if got := file.Services["temporal-ui"].Environment["TEMPORAL_DISABLE_WRITE_ACTIONS"]; got != "true" {
		t.Errorf("temporal-ui: TEMPORAL_DISABLE_WRITE_ACTIONS = %q, want \"true\"", got)
	}
	for _, v := range []string{"TEMPORAL_AUTH_ENABLED", "TEMPORAL_AUTH_PROVIDER_URL", "TEMPORAL_AUTH_CALLBACK_URL"} {
		if !strings.Contains(string(raw), v) {
			t.Errorf("docker-compose.yml does not say how to put the UI behind a login (%s)", v)
		}
	}
}

// composePort renders a ports entry, short ("127.0.0.1:8233:8080",
// "8080:8080", "8080") or long ({host_ip, published, target}), as
// "host_ip:published:target", host_ip empty for every interface.
func composePort(t *testing.T, n yaml.Node) string {
	t.Helper()
	if n.Kind == yaml.MappingNode {
		var long struct {
			HostIP    string `yaml:"host_ip"`
			Published string `yaml:"published"`
			Target    string `yaml:"target"`
		}
		if err := n.Decode(&long); err != nil {
			t.Fatal(err)
		}
		return long.HostIP + ":" + long.Published + ":" + long.Target
	}
	parts := strings.Split(strings.TrimSuffix(strings.TrimSuffix(n.Value, "/tcp"), "/udp"), ":")
	switch len(parts) {
	case 1:
		return "::" + parts[0]
	case 2:
		return ":" + parts[0] + ":" + parts[1]
	default:
		return strings.Join(parts[len(parts)-3:], ":")
	}
}
