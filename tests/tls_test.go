package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// testPKI is what a TLS test needs on disk: a CA and the frontend's
// certificate for 127.0.0.1 and localhost; a client CA and a client
// certificate of it; and another CA with a client certificate of its own,
// which the frontend must refuse.
type testPKI struct {
	dir                          string
	serverCA, serverCert, key    string
	clientCA, clientCert, client string // client: the client certificate's key
	otherCA, otherCert, other    string // other: its key
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	serverCA := newPKICA(t, p.dir, "a2aflow test server CA")
	clientCA := newPKICA(t, p.dir, "a2aflow test client CA")
	otherCA := newPKICA(t, p.dir, "a2aflow test other CA")
	p.serverCA, p.clientCA, p.otherCA = serverCA.file, clientCA.file, otherCA.file
	p.serverCert, p.key = serverCA.issue(t, p.dir, "frontend", true)
	p.clientCert, p.client = clientCA.issue(t, p.dir, "worker", false)
	p.otherCert, p.other = otherCA.issue(t, p.dir, "intruder", false)
	return p
}

type pkiCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

func newPKICA(t *testing.T, dir, name string) *pkiCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".pem")
	writePEM(t, file, "CERTIFICATE", der)
	return &pkiCA{cert: cert, key: key, file: file}
}

// issue writes a certificate of ca and its key: a server's for 127.0.0.1
// and localhost, or a client's.
func (ca *pkiCA) issue(t *testing.T, dir, name string, server bool) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func writePEM(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTemporalMutualTLS runs `a2aflow temporal` with a frontend that
// requires client certificates, a worker connecting through the Temporal
// SDK's variables (TEMPORAL_ADDRESS, TEMPORAL_TLS_*), one API through
// a2aflow's flags and one through a temporal.toml profile, and books a trip
// through both APIs; the Web UI reads the task through the frontend. A
// worker with a certificate of another CA, a CA that did not sign the
// frontend's certificate, no certificate, a certificate without its key, or
// no TLS at all fails at once with one line saying so.
func TestTemporalMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	dataDir := t.TempDir()
	port := harness.FreePort(t)
	temporalAddr := fmt.Sprintf("127.0.0.1:%d", port)
	uiURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	apiURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	api2URL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	// No A2AFLOW_TEMPORAL_ADDR, which would win over TEMPORAL_ADDRESS, and
	// no temporal.toml of the user's.
	base := []string{"A2AFLOW_LOG_LEVEL=warn", "A2AFLOW_DATA_DIR=" + dataDir, "A2AFLOW_SECRETS_KEY=" + harness.SecretsKey,
		"A2AFLOW_TEMPORAL_ADDR=", "TEMPORAL_CONFIG_FILE=" + filepath.Join(pki.dir, "none.toml")}
	with := func(env ...string) []string { return append(append([]string{}, base...), env...) }

	tp := harness.Start(t, "a2aflow temporal", base, "temporal", "--temporal-addr", temporalAddr, "--ui-addr", strings.TrimPrefix(uiURL, "http://"),
		"--temporal-tls-server-cert", pki.serverCert, "--temporal-tls-server-key", pki.key, "--temporal-tls-client-ca", pki.clientCA)
	tp.WaitOutput("Temporal is serving", 2*time.Minute)
	tp.WaitOutput("(namespace default; mutual TLS)", time.Second)

	w := harness.Start(t, "a2aflow worker", with("TEMPORAL_ADDRESS="+temporalAddr, "TEMPORAL_NAMESPACE=default",
		"TEMPORAL_TLS_CLIENT_CERT_PATH="+pki.clientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH="+pki.client,
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH="+pki.serverCA), "worker")
	w.WaitOutput("a2aflow worker is running", time.Minute)
	// By the certificate's other name, localhost.
	api := harness.Start(t, "a2aflow api (flags)", base, "api", "--http-addr", strings.TrimPrefix(apiURL, "http://"),
		"--temporal-addr", fmt.Sprintf("localhost:%d", port),
		"--temporal-tls-cert", pki.clientCert, "--temporal-tls-key", pki.client, "--temporal-tls-ca", pki.serverCA)
	profile := filepath.Join(pki.dir, "temporal.toml")
	if err := os.WriteFile(profile, fmt.Appendf(nil, `
[profile.default]
address = "127.0.0.1:1"

[profile.a2aflow]
address = %q
namespace = "default"

[profile.a2aflow.tls]
client_cert_path = %q
client_key_path = %q
server_ca_cert_path = %q
`, temporalAddr, pki.clientCert, pki.client, pki.serverCA), 0o600); err != nil {
		t.Fatal(err)
	}
	api2 := harness.Start(t, "a2aflow api (profile)", with("TEMPORAL_CONFIG_FILE="+profile, "TEMPORAL_PROFILE=a2aflow"),
		"api", "--http-addr", strings.TrimPrefix(api2URL, "http://"))
	for _, p := range []*harness.Proc{api, api2} {
		p.WaitOutput("a2aflow API is serving", time.Minute)
	}
	harness.WaitHealthy(t, apiURL)
	harness.WaitHealthy(t, api2URL)

	ctx := harness.Context(t)
	c1, _ := harness.NewClient(t, ctx, apiURL)
	c2, _ := harness.NewClient(t, ctx, api2URL)
	task := bookAcrossReplicas(t, ctx, c1, c2)
	harness.TravelBooking(t, ctx, c1)

	// The Web UI's server lists the task through the frontend, with the
	// embedded server's own client certificate.
	resp, err := http.Get(uiURL + "/api/v1/namespaces/default/workflows?query=")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), string(task.ID)) {
		t.Errorf("UI workflow list: %d %.300s; want the task %s", resp.StatusCode, body, task.ID)
	}

	failures := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"client certificate of another CA",
			[]string{"TEMPORAL_TLS_CLIENT_CERT_PATH=" + pki.otherCert, "TEMPORAL_TLS_CLIENT_KEY_PATH=" + pki.other, "TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + pki.serverCA}, nil,
			`the frontend refused this client's certificate ("CN=intruder", issued by "CN=a2aflow test other CA"): it is not signed by a CA the frontend trusts`},
		{"client certificate of another CA, by flags", nil,
			[]string{"--temporal-tls-cert", pki.otherCert, "--temporal-tls-key", pki.other, "--temporal-tls-ca", pki.serverCA},
			`the frontend refused this client's certificate ("CN=intruder"`},
		{"CA that did not sign the frontend's certificate",
			[]string{"TEMPORAL_TLS_CLIENT_CERT_PATH=" + pki.clientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH=" + pki.client, "TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + pki.otherCA}, nil,
			`the frontend's certificate (issued by "CN=a2aflow test server CA") is not signed by a CA this client trusts: give its CA with --temporal-tls-ca or TEMPORAL_TLS_SERVER_CA_CERT_PATH`},
		{"no client certificate", []string{"TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + pki.serverCA}, nil,
			"the frontend requires a client certificate (mutual TLS): give --temporal-tls-cert and --temporal-tls-key"},
		{"certificate without its key", []string{"TEMPORAL_TLS_CLIENT_CERT_PATH=" + pki.clientCert, "TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + pki.serverCA}, nil,
			"the Temporal client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH) needs its private key"},
		{"plain gRPC", nil, nil, "the frontend serves TLS and this client dials without: set --temporal-tls"},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, harness.Binary(), append([]string{"worker"}, f.args...)...)
			cmd.Env = append(os.Environ(), with(append([]string{"TEMPORAL_ADDRESS=" + temporalAddr}, f.env...)...)...)
			begin := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(begin)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want exit code 1; output:\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "a2aflow: ") || !strings.Contains(lines[0], f.want) {
				t.Errorf("want one line saying %q, got:\n%s", f.want, out)
			}
			// Not a minute of retries: the dial fails at once.
			if took > 15*time.Second {
				t.Errorf("failed after %v, want at once", took)
			}
			t.Logf("%v: %s", took.Round(time.Millisecond), lines[len(lines)-1])
		})
	}
}

// TestServeTLS runs `a2aflow serve` with a TLS frontend (no client
// certificates): serve's own worker and API reach it, and so does an SDK
// client trusting its CA, while a plain gRPC client does not.
func TestServeTLS(t *testing.T) {
	pki := newTestPKI(t)
	s := harness.StartServe(t, t.TempDir(), "--temporal-tls-server-cert", pki.serverCert, "--temporal-tls-server-key", pki.key)
	s.Proc().WaitOutput("; TLS)", time.Second)
	ctx := harness.Context(t)
	c, _ := harness.NewClient(t, ctx, s.APIURL)
	task := harness.TravelBooking(t, ctx, c)

	roots := x509.NewCertPool()
	raw, err := os.ReadFile(pki.serverCA)
	if err != nil {
		t.Fatal(err)
	}
	roots.AppendCertsFromPEM(raw)
	tc, err := client.DialContext(ctx, client.Options{HostPort: s.TemporalAddr, Namespace: "default",
		ConnectionOptions: client.ConnectionOptions{TLS: &tls.Config{RootCAs: roots}}})
	if err != nil {
		t.Fatalf("dial the TLS frontend: %v", err)
	}
	defer tc.Close()
	desc, err := tc.DescribeWorkflowExecution(ctx, string(task.ID), "")
	if err != nil {
		t.Fatal(err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("task's workflow %s, want Completed", st)
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if plain, err := client.DialContext(dctx, client.Options{HostPort: s.TemporalAddr, Namespace: "default"}); err == nil {
		plain.Close()
		t.Error("a plain gRPC client reached the TLS frontend")
	}
}
