package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// javaSDKVersion is the a2a-java version tests/java/pom.xml pins
// (a2a.sdk.version): the SDK's A2A 1.0 release on Maven Central.
const javaSDKVersion = "1.0.0.Alpha3"

// javaDir is the Maven project of the Java client.
const javaDir = "java"

// javaReport is what tests/java's a2aflow.A2AClient prints: the travel
// matrix's clientReport, its card with what the SDK's parser refused, and,
// under "more", the methods beyond the matrix (as pythonMore).
type javaReport struct {
	clientReport
	Card javaCard `json:"card"`
	More javaMore `json:"more"`
	// GetTaskHistoryLength2Error is GetTask(historyLength=2)'s error, which
	// leaves getTask.historyLength2 at -1.
	GetTaskHistoryLength2Error string `json:"getTaskHistoryLength2Error"`
}

// javaMore is pythonMore with each push config step reported on its own:
// its result, or "error: NAME" (see the client's errorName).
type javaMore struct {
	TaskID    string   `json:"taskId"`
	ListTasks []string `json:"listTasks"`
	// ListTasksPageSize10 names the error of ListTasks with a pageSize
	// over the number of tasks (javaListPageSizeWhy).
	ListTasksPageSize10 string `json:"listTasksPageSize10"`
	PushTaskID          string `json:"pushTaskId"`
	Push                struct {
		ID          string `json:"id"`
		Created     string `json:"created"`
		Got         string `json:"got"`
		Listed      string `json:"listed"`
		Deleted     string `json:"deleted"`
		AfterDelete string `json:"afterDelete"`
		GetDeleted  string `json:"getDeleted"`
	} `json:"push"`
	ContentType struct {
		Input  string `json:"input"`
		Output string `json:"output"`
	} `json:"contentType"`
}

type javaCard struct {
	cardReport
	// StrictError is A2A.getAgentCard's error: the SDK's card parser
	// refuses members the 1.0 AgentCard lacks.
	StrictError string `json:"strictError"`
	// Dropped are the card's members the client removed before parsing
	// the rest with the same parser.
	Dropped []string `json:"dropped"`
}

// javaVariants are the bindings a2a-java speaks, at its one protocol
// version. Its 0.3 release (0.3.3.Final) is not run: see javaNo03Why.
var javaVariants = []matrixVariant{jsonRPC10, httpJSON10, grpc10}

// javaNo03Why is why only the SDK's 1.0 release is run.
const javaNo03Why = "a2a-java 0.3.3.Final is the SDK's 0.3 line, a release of its own with the same Maven coordinates " +
	"and packages as 1.0.0.Alpha3 (one classpath holds one of them); it is not run yet"

// javaCardWhy explains the card deviation.
const javaCardWhy = "a2a-java 1.0.0.Alpha3 reads the card with strict ProtoJSON (A2ACardResolver, JSONRPCUtils.parseJsonString " +
	"without ignoringUnknownFields), so it refuses the 0.3 members (url, preferredTransport, protocolVersion, " +
	"additionalInterfaces) that a card serving 0.3 clients too carries beside the 1.0 ones; a2a-java's later " +
	"sources accept them (a2aproject/a2a-java#863), unreleased on Maven Central. The client parses the card " +
	"without them, with the SDK's parser"

// javaNoVersionWhy explains the wire deviation.
const javaNoVersionWhy = "a2a-java 1.0.0.Alpha3's HTTP transports send no A2A-Version header (its gRPC transport " +
	"passes only an X-A2A-Version the caller sets); a2aflow serves an unversioned request that only 1.0 has (a 1.0 " +
	"JSON-RPC method, a 1.0 HTTP+JSON route) as 1.0 (internal/api/versionless.go)"

// javaRESTErrorsWhy explains the HTTP+JSON error deviation.
const javaRESTErrorsWhy = "a2a-java 1.0.0.Alpha3's REST client (RestErrorMapper) types only the body of a2a-java's own " +
	"server, {\"error\": \"io.a2a.spec.TaskNotFoundError\", \"message\": ...}; the 1.0 HTTP+JSON binding's error " +
	"body is a google.rpc.Status under \"error\" (an object), on which the mapper's getAsString() throws " +
	"UnsupportedOperationException: the HTTP status and the body are right"

// javaListPageSizeWhy explains the ListTasks deviation.
const javaListPageSizeWhy = "a2a-java 1.0.0.Alpha3's ListTasksResult (its JSON-RPC client builds one) refuses a " +
	"response whose pageSize differs from the number of tasks listed; A2A's ListTasksResponse.page_size is " +
	"\"the page size used for this response\", which a2aflow answers as asked (10 for one task)"

// javaPushDraftWhy explains the push config deviation.
const javaPushDraftWhy = "a2a-java 1.0.0.Alpha3 was built from a draft of the 1.0 proto (package a2a.v1): its " +
	"push config requests are CreateTaskPushNotificationConfigRequest{taskId, configId, config{url, token}} and " +
	"its TaskPushNotificationConfig nests pushNotificationConfig, where the released 1.0 has one flat " +
	"TaskPushNotificationConfig{taskId, id, url, token}; a2aflow reads no URL in the draft's body and refuses it " +
	"(InvalidParams), so nothing is created. Its JSON-RPC list method is the draft's " +
	"ListTaskPushNotificationConfig (MethodNotFound; 1.0 has ListTaskPushNotificationConfigs)"

// javaGRPCWhy explains the gRPC variant.
const javaGRPCWhy = "a2a-java 1.0.0.Alpha3's gRPC transport calls the draft proto's service a2a.v1.A2AService, " +
	"which is A2A 0.3's service name (the released 1.0 is lf.a2a.v1.A2AService): a2aflow serves it as 0.3, whose " +
	"messages differ from the draft's (GetTask's 0.3 name \"tasks/{id}\" against the draft's id; the 0.3 service " +
	"has TaskSubscription, not SubscribeToTask). Only the travel flow with SendMessage is asserted"

// javaRESTGetTaskWhy explains the HTTP+JSON GetTask deviation.
const javaRESTGetTaskWhy = "a2a-java 1.0.0.Alpha3's REST GetTask sends no historyLength of 0 (it sends one only " +
	"when > 0), so historyLength=0 reads the whole history, and writes historyLength with String.format(\"%2d\"), " +
	"whose one-digit length starts with a space the JDK refuses in a URI"

// TestJavaClient drives a2aflow with the official A2A Java SDK (a2a-java,
// its Client built by tests/java with Maven, pinned in tests/java/pom.xml)
// over each binding the SDK speaks: JSON-RPC, HTTP+JSON and gRPC, A2A 1.0.
// The travel scenarios and their expectations are the Go clients'
// (compat_test.go); ListTasks, the push config methods and an unsupported
// content type are checked as for the Python client. The SDK's departures
// are named (javaCardWhy, javaNoVersionWhy, javaRESTErrorsWhy, javaGRPCWhy).
// It skips only when java, javac or mvn is missing outside CI.
func TestJavaClient(t *testing.T) {
	java, classpath := buildJavaClient(t)
	t.Logf("a2a-java %s; %s", javaSDKVersion, javaNo03Why)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hook.Close)
	s := startServe(t, t.TempDir(), "--grpc-addr", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--push-allow-hosts", "loopback")
	for _, v := range javaVariants {
		t.Run("Java "+v.String(), func(t *testing.T) {
			got := runJavaClient(t, java, classpath, s.APIURL, v, hook.URL+"/java")
			t.Run("card", func(t *testing.T) {
				t.Logf("known deviation: %s", javaCardWhy)
				if !strings.Contains(got.Card.StrictError, "in message a2a.v1.AgentCard") {
					t.Errorf("A2A.getAgentCard's error %q, want its refusal of a member unknown to a2a.v1.AgentCard (%s)", got.Card.StrictError, javaCardWhy)
				}
				if want := []string{"additionalInterfaces", "preferredTransport", "protocolVersion", "url"}; !equalStrings(got.Card.Dropped, want) {
					t.Errorf("members unknown to the SDK's AgentCard: %q, want the 0.3 ones %q", got.Card.Dropped, want)
				}
			})
			got.clientReport.Card = got.Card.cardReport
			if v == grpc10 {
				checkJavaGRPC(t, got)
				return
			}
			want := wantFor(t, "Java", v)
			want.Card.Interfaces = grpcCardInterfaces
			t.Logf("known deviation: Java %s sends no A2A-Version: %s", v, javaNoVersionWhy)
			want.Wire = []string{string(v.binding) + " none"}
			if v == httpJSON10 {
				for _, k := range []string{errGetUnknown, errCancelUnknown, errCancelCanceled, errSendUnknown, errSendCompleted,
					errSubscribeUnknown, errSubscribeCompleted} {
					e := javaRESTUntyped
					switch k {
					case errSubscribeUnknown:
						e = "other: IOException: Request failed with status 404:null"
					case errSubscribeCompleted:
						e = "other: IOException: Request failed with status 400:null"
					}
					t.Logf("known deviation: Java %s %s answers %q instead of %q: %s", v, k, e, want.Errors[k], javaRESTErrorsWhy)
					want.Errors[k] = e
				}
				t.Logf("known deviation: Java %s GetTask(historyLength=0) answers the whole history, GetTask(historyLength=2) fails: %s", v, javaRESTGetTaskWhy)
				want.GetTask.HistoryLength0, want.GetTask.HistoryLength2 = len(want.GetTask.Roles), -1
				if !strings.Contains(got.GetTaskHistoryLength2Error, "Illegal character in query") {
					t.Errorf("GetTask(historyLength=2) failed with %q, want the SDK's URI error (%s)", got.GetTaskHistoryLength2Error, javaRESTGetTaskWhy)
				}
			} else if got.GetTaskHistoryLength2Error != "" {
				t.Errorf("GetTask(historyLength=2): %s", got.GetTaskHistoryLength2Error)
			}
			checkClientReport(t, want, got.clientReport)
			t.Run("more", func(t *testing.T) {
				checkJavaMore(t, v, got)
			})
		})
	}
}

// javaRESTUntyped is what a2a-java's REST client reports for an A2A error
// answered over HTTP+JSON (javaRESTErrorsWhy).
const javaRESTUntyped = "other: UnsupportedOperationException: JsonObject"

// checkJavaMore checks the methods beyond the travel matrix, as
// checkPythonMore does, with a2a-java's departures named.
func checkJavaMore(t *testing.T, v matrixVariant, got javaReport) {
	t.Helper()
	m := got.More
	if m.TaskID == "" || m.PushTaskID != m.TaskID {
		t.Errorf("ListTasks' task %q, push configs' task %q: want one task", m.TaskID, m.PushTaskID)
	}
	want := javaMore{TaskID: m.TaskID, ListTasks: []string{m.TaskID}, PushTaskID: m.PushTaskID, ListTasksPageSize10: "no error"}
	id := m.Push.ID
	if !strings.HasPrefix(id, "java-") {
		t.Errorf("push config ID %q, want java-...", id)
	}
	want.Push.ID = id
	t.Logf("known deviation: Java %s push configs: %s", v, javaPushDraftWhy)
	switch v {
	case jsonRPC10:
		t.Logf("known deviation: Java %s ListTasks(pageSize=10) of one task fails: %s", v, javaListPageSizeWhy)
		want.ListTasksPageSize10 = "InvalidParams"
		want.Push.Created, want.Push.Got, want.Push.Listed = "error: InvalidParams", "error: TaskNotFound", "error: MethodNotFound"
		want.Push.Deleted, want.Push.AfterDelete, want.Push.GetDeleted = "error: TaskNotFound", "error: MethodNotFound", "TaskNotFound"
		want.ContentType.Input, want.ContentType.Output = "ContentTypeNotSupported", "ContentTypeNotSupported"
	case httpJSON10:
		want.Push.Created, want.Push.Got, want.Push.Listed = "error: "+javaRESTUntyped, "error: "+javaRESTUntyped, "[]"
		want.Push.Deleted, want.Push.AfterDelete, want.Push.GetDeleted = "error: "+javaRESTUntyped, "[]", javaRESTUntyped
		want.ContentType.Input, want.ContentType.Output = javaRESTUntyped, javaRESTUntyped
	}
	if diff := cmp.Diff(want, m, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, scenario := range []string{"ListTasks", "PushConfigs", "ContentType"} {
		if f := got.Failures[scenario]; f != "" {
			t.Errorf("scenario %s broke off: %s", scenario, f)
		}
	}
}

// checkJavaGRPC checks what works over gRPC (javaGRPCWhy): the travel
// flow with SendMessage, and the draft's GetTask refused.
func checkJavaGRPC(t *testing.T, got javaReport) {
	t.Helper()
	t.Logf("known deviation: Java %s: %s", grpc10, javaGRPCWhy)
	want := wantClientReport(grpc10)
	if diff := cmp.Diff(want.SendMessage, got.SendMessage); diff != "" {
		t.Errorf("SendMessage (-want +got):\n%s", diff)
	}
	if f := got.Failures["SendMessage"]; f != "" {
		t.Errorf("scenario SendMessage broke off: %s", f)
	}
	if w := []string{"GRPC none"}; !equalStrings(got.Wire, w) {
		t.Errorf("wire %q, want %q", got.Wire, w)
	}
	if f := got.Failures["GetTask"]; !strings.Contains(f, "invalid or missing task ID in name") {
		t.Errorf("GetTask over gRPC: %q, want the 0.3 service's refusal of the draft's request (%s); if it now works, "+
			"assert the whole matrix", f, javaGRPCWhy)
	}
}

// buildJavaClient compiles tests/java with Maven and returns the java
// command and the client's classpath. Maven works offline (-o) from
// ~/.m2, which .ci/run fills; outside CI a first run resolves online once.
// Without java or mvn it skips, but fails in CI (CI=true), where .ci/run
// installs them.
func buildJavaClient(t *testing.T) (java, classpath string) {
	t.Helper()
	java, errJava := exec.LookPath("java")
	_, errJavac := exec.LookPath("javac")
	mvn, errMvn := exec.LookPath("mvn")
	if errJava != nil || errJavac != nil || errMvn != nil {
		const how = "apt-get install maven default-jdk-headless (.ci/run does)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("java, javac or mvn is missing: %s", how)
		}
		t.Skipf("java, javac or mvn is missing: %s", how)
	}
	pom, err := os.ReadFile(filepath.Join(javaDir, "pom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`<a2a\.sdk\.version>([^<]+)</a2a\.sdk\.version>`).FindSubmatch(pom); m == nil || string(m[1]) != javaSDKVersion {
		t.Fatalf("tests/java/pom.xml pins a2a-java %q, want %s", m, javaSDKVersion)
	}
	build := func(offline bool) ([]byte, error) {
		args := []string{"-q", "-B", "compile", "dependency:build-classpath", "-Dmdep.outputFile=target/classpath.txt"}
		if offline {
			args = append([]string{"-o"}, args...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, mvn, args...)
		cmd.Dir = javaDir
		return cmd.CombinedOutput()
	}
	if out, err := build(true); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mvn -o compile in tests/java: %v (.ci/run resolves the dependencies into ~/.m2 first)\n%s", err, out)
		}
		t.Logf("mvn -o compile in tests/java failed (%v); resolving the dependencies into ~/.m2 once", err)
		if out, err := build(false); err != nil {
			t.Fatalf("mvn compile in tests/java: %v\n%s", err, out)
		}
	}
	deps, err := os.ReadFile(filepath.Join(javaDir, "target", "classpath.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(deps), "a2a-java-sdk-client-"+javaSDKVersion+".jar") {
		t.Fatalf("the classpath has no a2a-java-sdk-client-%s.jar:\n%s", javaSDKVersion, deps)
	}
	classes, err := filepath.Abs(filepath.Join(javaDir, "target", "classes"))
	if err != nil {
		t.Fatal(err)
	}
	return java, classes + string(os.PathListSeparator) + strings.TrimSpace(string(deps))
}

// runJavaClient runs a2aflow.A2AClient against baseURL over variant v and
// decodes its report.
func runJavaClient(t *testing.T, java, classpath, baseURL string, v matrixVariant, hook string) javaReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-cp", classpath, "a2aflow.A2AClient", baseURL, string(v.binding), v.version, hook)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("A2AClient %s did not finish within 3 minutes\nstdout:\n%s\nstderr:\n%s", v, &stdout, &stderr)
		}
		t.Fatalf("A2AClient %s: %v\nstdout:\n%s\nstderr:\n%s", v, err, &stdout, &stderr)
	}
	var got javaReport
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("A2AClient %s printed no report: %v\nstdout:\n%s\nstderr:\n%s", v, err, &stdout, &stderr)
	}
	if stderr.Len() > 0 {
		t.Logf("java stderr:\n%s", &stderr)
	}
	return got
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
