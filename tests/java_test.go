package tests

import (
	"context"
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

	"github.com/a2aflow/a2aflow/tests/harness"
)

// javaSDKVersion is the a2a-java version tests/java/pom.xml pins
// (a2a.sdk.version): the SDK's A2A 1.0 release on Maven Central.
const javaSDKVersion = "1.0.0.Alpha3"

// javaSDKVersion03 is the a2a-java version tests/java/v03/pom.xml pins: the
// SDK's A2A 0.3 release, a project of its own (one classpath holds one
// release: both have the same Maven coordinates and packages).
const javaSDKVersion03 = "0.3.3.Final"

// javaDir and javaDir03 are the Maven projects of the Java clients
// (a2aflow.A2AClient and a2aflow.A2AClient03).
const (
	javaDir   = "java"
	javaDir03 = "java/v03"
)

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

// javaVariants are the bindings a2a-java speaks: its 1.0 release's three
// at 1.0 and its 0.3 release's three at 0.3.
var javaVariants = []matrixVariant{jsonRPC10, httpJSON10, grpc10, jsonRPC03, httpJSON03, grpc03}

// javaCardWhy explains the card deviation.
const javaCardWhy = "a2a-java 1.0.0.Alpha3 reads the card with strict ProtoJSON (A2ACardResolver, JSONRPCUtils.parseJsonString " +
	"without ignoringUnknownFields), so it refuses the 0.3 members (url, preferredTransport, protocolVersion, " +
	"additionalInterfaces) that a card serving 0.3 clients too carries beside the 1.0 ones; a2a-java's later " +
	"sources accept them (a2aproject/a2a-java#863), unreleased on Maven Central. The client parses the card " +
	"without them, with the SDK's parser"

// javaNoVersionWhy explains the wire deviation.
const javaNoVersionWhy = "a2a-java 1.0.0.Alpha3's HTTP transports send no A2A-Version header (its gRPC transport " +
	"passes only an X-A2A-Version the caller sets); a2aflow serves an unversioned request that only 1.0 has (a 1.0 " +
	"JSON-RPC method, a 1.0 HTTP+JSON route) as 1.0 (internal/api/a2abinding/versionless.go)"

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
// over each binding the SDK speaks: JSON-RPC, HTTP+JSON and gRPC, A2A 1.0;
// and with its 0.3 release (tests/java/v03) over the three at A2A 0.3.
// The travel scenarios and their expectations are the Go clients'
// (compat_test.go); ListTasks, the push config methods and an unsupported
// content type are checked as for the Python client. The SDK's departures
// are named (javaCardWhy, javaNoVersionWhy, javaRESTErrorsWhy, javaGRPCWhy).
// It skips only when java, javac or mvn is missing outside CI.
func TestJavaClient(t *testing.T) {
	java, classpath := buildJavaClient(t, javaDir, javaSDKVersion)
	_, classpath03 := buildJavaClient(t, javaDir03, javaSDKVersion03)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hook.Close)
	s := harness.StartServe(t, t.TempDir(), "--grpc-addr", fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t)), "--push-allow-hosts", "loopback")
	for _, v := range javaVariants {
		t.Run("Java "+v.String(), func(t *testing.T) {
			if v.version == "0.3" {
				checkJava03(t, v, runJavaClient(t, java, classpath03, "a2aflow.A2AClient03", s.APIURL, v, hook.URL+"/java"), hook.URL+"/java")
				return
			}
			got := runJavaClient(t, java, classpath, "a2aflow.A2AClient", s.APIURL, v, hook.URL+"/java")
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
		// Deleting a config that was never created succeeds: deletion is
		// idempotent (A2A §3.1.10).
		want.Push.Deleted, want.Push.AfterDelete, want.Push.GetDeleted = "deleted", "error: MethodNotFound", "TaskNotFound"
		want.ContentType.Input, want.ContentType.Output = "ContentTypeNotSupported", "ContentTypeNotSupported"
	case httpJSON10:
		want.Push.Created, want.Push.Got, want.Push.Listed = "error: "+javaRESTUntyped, "error: "+javaRESTUntyped, "[]"
		want.Push.Deleted, want.Push.AfterDelete, want.Push.GetDeleted = "deleted", "[]", javaRESTUntyped
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

// javaREST03Why explains a2a-java 0.3.3.Final's HTTP+JSON errors.
const javaREST03Why = "a2a-java 0.3.3.Final's REST client (RestErrorMapper.mapRestError) types an error only by a top-level " +
	"\"error\" holding a Java class name ({\"error\": \"io.a2a.spec.TaskNotFoundError\"}, its own 0.3 server's body); a2aflow's " +
	"0.3 HTTP+JSON error body has the google.rpc.Status under \"error\", which a2a-go's 0.3 client (and a2aflow's own remote " +
	"client) reads, beside the \"code\", \"type\" and \"message\" the JS and Python 0.3 clients type by: one member cannot " +
	"be both, and the SDK reports the message untyped. The HTTP status and body are right"

// javaSSE03Why explains a2a-java 0.3.3.Final's refused subscriptions over
// HTTP+JSON.
const javaSSE03Why = "a2a-java 0.3.3.Final's HTTP client reads no body of a stream request refused with an HTTP error " +
	"(io.a2a.client.http.JdkA2AHttpClient$JdkBuilder asyncRequest: IOException \"Request failed with status <code>:\" and " +
	"the line subscriber's null), so a 0.3 subscription that a2aflow refuses before its stream opens (404 TaskNotFound, " +
	"400 UnsupportedOperation, as the Go, JS and Python 0.3 clients type it) reaches it as a bare status"

// javaGRPC03Why explains a2a-java 0.3.3.Final's gRPC errors.
const javaGRPC03Why = "a2a-java 0.3.3.Final's gRPC client (GrpcErrorMapper) types an error by its Java class name in the " +
	"status message, a convention of its own server, else by the status code: NOT_FOUND as TaskNotFound, INVALID_ARGUMENT " +
	"as InvalidParams, and FAILED_PRECONDITION (A2A 0.3's TaskNotCancelable and UnsupportedOperation) not at all"

// uuidRe finds task IDs in error messages, which differ between runs.
var uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// checkJava03 checks a2a-java 0.3.3.Final's report against the Go
// clients' expectations at 0.3, with the SDK's departures named.
func checkJava03(t *testing.T, v matrixVariant, got javaReport, hook string) {
	t.Helper()
	got.clientReport.Card = got.Card.cardReport
	for k, e := range got.Errors {
		got.Errors[k] = uuidRe.ReplaceAllString(e, "TASK")
	}
	want := wantClientReport(v)
	// A 0.3 client sends no A2A-Version, which A2A reads as 0.3.
	want.Wire = []string{string(v.binding) + " none"}
	// What a 0.3 card shows: the preferred transport and version, and the
	// additional interfaces' transports.
	want.Card.Interfaces = []string{"JSONRPC 0.3", "HTTP+JSON", "GRPC"}
	deviate := func(k, e, why string) {
		t.Logf("known deviation: Java %s %s answers %q instead of %q: %s", v, k, e, want.Errors[k], why)
		want.Errors[k] = e
	}
	wantMore := javaMore{PushTaskID: got.More.PushTaskID}
	id := got.More.Push.ID
	wantMore.Push.ID = id
	wantMore.Push.Created = id + " " + got.More.PushTaskID + " " + hook
	wantMore.Push.Got = wantMore.Push.Created
	wantMore.Push.Listed = "[" + id + " " + hook + "]"
	wantMore.Push.Deleted, wantMore.Push.AfterDelete, wantMore.Push.GetDeleted = "deleted", "[]", "TaskNotFound"
	wantMore.ContentType.Input, wantMore.ContentType.Output = "ContentTypeNotSupported", "ContentTypeNotSupported"
	switch v {
	case httpJSON03:
		other := "other: A2AClientException: "
		deviate(errGetUnknown, other+"task not found", javaREST03Why)
		deviate(errCancelUnknown, other+"task not found", javaREST03Why)
		deviate(errSendUnknown, other+"task not found", javaREST03Why)
		deviate(errSubscribeUnknown, "other: IOException: Request failed with status 404:null", javaSSE03Why)
		deviate(errCancelCanceled, other+"task TASK is in a terminal state", javaREST03Why)
		deviate(errSendCompleted, other+"task TASK is in a terminal state", javaREST03Why)
		deviate(errSubscribeCompleted, "other: IOException: Request failed with status 400:null", javaSSE03Why)
		wantMore.Push.GetDeleted = other + "task " + got.More.PushTaskID + " has no push notification config \"" + id + "\""
		wantMore.ContentType.Input = other + "message.parts[0] is application/octet-stream: agent travel does not take it; it takes text/plain, application/json"
		wantMore.ContentType.Output = other + "configuration.acceptedOutputModes image/png: agent travel produces none of them; it produces text/plain, application/json"
		t.Logf("known deviation: Java %s GetTask(historyLength=0) answers the whole history, GetTask(historyLength=2) fails: %s", v, javaRESTGetTaskWhy)
		want.GetTask.HistoryLength0, want.GetTask.HistoryLength2 = len(want.GetTask.Roles), -1
		if !strings.Contains(got.GetTaskHistoryLength2Error, "Illegal character in query") {
			t.Errorf("GetTask(historyLength=2) failed with %q, want the SDK's URI error (%s)", got.GetTaskHistoryLength2Error, javaRESTGetTaskWhy)
		}
	case grpc03:
		deviate(errCancelCanceled, "other: A2AClientException: Failed to cancel task: FAILED_PRECONDITION: task TASK is in a terminal state", javaGRPC03Why)
		deviate(errSendCompleted, "other: A2AClientException: Failed to send message: FAILED_PRECONDITION: task TASK is in a terminal state", javaGRPC03Why)
		deviate(errSubscribeCompleted, "other: A2AClientException: gRPC error: FAILED_PRECONDITION: task TASK is TASK_STATE_COMPLETED; there is nothing to subscribe to", javaGRPC03Why)
		wantMore.ContentType.Input, wantMore.ContentType.Output = "InvalidParams", "InvalidParams"
		// As for the Go and Python 0.3 gRPC clients.
		t.Logf("known deviation: Java %s GetTask(historyLength=0) answers the whole history: 0.3's proto cannot send 0", v)
		want.GetTask.HistoryLength0 = len(want.GetTask.Roles)
	}
	if v != httpJSON03 && got.GetTaskHistoryLength2Error != "" {
		t.Errorf("GetTask(historyLength=2): %s", got.GetTaskHistoryLength2Error)
	}
	checkClientReport(t, want, got.clientReport)
	t.Run("more", func(t *testing.T) {
		if !strings.HasPrefix(id, "java-") || got.More.PushTaskID == "" {
			t.Errorf("push config %q of task %q, want java-... of a task", id, got.More.PushTaskID)
		}
		if diff := cmp.Diff(wantMore, got.More, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		for _, scenario := range []string{"PushConfigs", "ContentType"} {
			if f := got.Failures[scenario]; f != "" {
				t.Errorf("scenario %s broke off: %s", scenario, f)
			}
		}
	})
}

// buildJavaClient compiles tests/java with Maven and returns the java
// command and the client's classpath. Maven works offline (-o) from
// ~/.m2, which .ci/run fills; outside CI a first run resolves online once.
// Without java or mvn it skips, but fails in CI (CI=true), where .ci/run
// installs them.
func buildJavaClient(t *testing.T, dir, version string) (java, classpath string) {
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
	pom, err := os.ReadFile(filepath.Join(dir, "pom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`<a2a\.sdk\.version>([^<]+)</a2a\.sdk\.version>`).FindSubmatch(pom); m == nil || string(m[1]) != version {
		t.Fatalf("tests/%s/pom.xml pins a2a-java %q, want %s", dir, m, version)
	}
	build := func(offline bool) ([]byte, error) {
		args := []string{"-q", "-B", "compile", "dependency:build-classpath", "-Dmdep.outputFile=target/classpath.txt"}
		if offline {
			args = append([]string{"-o"}, args...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, mvn, args...)
		cmd.Dir = dir
		return cmd.CombinedOutput()
	}
	if out, err := build(true); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mvn -o compile in tests/%s: %v (.ci/run resolves the dependencies into ~/.m2 first)\n%s", dir, err, out)
		}
		t.Logf("mvn -o compile in tests/%s failed (%v); resolving the dependencies into ~/.m2 once", dir, err)
		if out, err := build(false); err != nil {
			t.Fatalf("mvn compile in tests/%s: %v\n%s", dir, err, out)
		}
	}
	deps, err := os.ReadFile(filepath.Join(dir, "target", "classpath.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(deps), "a2a-java-sdk-client-"+version+".jar") {
		t.Fatalf("the classpath has no a2a-java-sdk-client-%s.jar:\n%s", version, deps)
	}
	classes, err := filepath.Abs(filepath.Join(dir, "target", "classes"))
	if err != nil {
		t.Fatal(err)
	}
	return java, classes + string(os.PathListSeparator) + strings.TrimSpace(string(deps))
}

// runJavaClient runs a2aflow.A2AClient against baseURL over variant v and
// decodes its report.
func runJavaClient(t *testing.T, java, classpath, class, baseURL string, v matrixVariant, hook string) javaReport {
	t.Helper()
	var got javaReport
	runClientReport(t, 3*time.Minute, class+" "+v.String(), "", &got, java, "-cp", classpath, class, baseURL, string(v.binding), v.version, hook)
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
