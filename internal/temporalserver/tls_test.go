package temporalserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

// testCA is a certificate authority made for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
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
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue writes a certificate of ca for name (server: DNS and IP SANs;
// client: client auth) and its key into dir and returns their paths.
func (ca *testCA) issue(t *testing.T, dir, name string, server bool) (certFile, keyFile string) {
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
		tmpl.DNSNames = []string{name}
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
	writeFile(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return certFile, keyFile
}

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFrontendMutualTLS serves the frontend with mutual TLS and checks that
// the server's own clients work through it (Start's checks, the Web UI's
// calls, the system worker running a schedule, ClientTLS) while a client
// without a certificate of the client CA is refused.
func TestFrontendMutualTLS(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA := newTestCA(t, "server CA"), newTestCA(t, "client CA")
	certFile, keyFile := serverCA.issue(t, dir, "temporal.test", true)
	clientCAFile := filepath.Join(dir, "client-ca.pem")
	writeFile(t, clientCAFile, clientCA.pem)
	clientCert, clientKey := clientCA.issue(t, dir, "worker", false)

	s := startServer(t, "mTLS", Options{DataDir: filepath.Join(dir, "data"), FrontendAddr: "127.0.0.1:0", UIAddr: "127.0.0.1:0",
		Logger: testLogger(t), FrontendTLS: &FrontendTLS{CertFile: certFile, KeyFile: keyFile, ClientCAFile: clientCAFile}})
	if on, mutual := s.TLS(); !on || !mutual {
		t.Fatalf("TLS() = %v, %v; want true, true", on, mutual)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(serverCA.pem)
	pair, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	dialWith := func(tc *tls.Config) (client.Client, error) {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return client.DialContext(dctx, client.Options{HostPort: s.FrontendAddr(), Namespace: s.Namespace(),
			Logger: sdklog.NewStructuredLogger(testLogger(t)), ConnectionOptions: client.ConnectionOptions{TLS: tc}})
	}

	// A client of the operator's client CA, verifying the server's CA.
	c, err := dialWith(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatalf("dial with a client certificate: %v", err)
	}
	defer c.Close()
	// Refused: no client certificate, and plain gRPC.
	if c2, err := dialWith(&tls.Config{RootCAs: roots}); err == nil {
		c2.Close()
		t.Error("dial without a client certificate succeeded")
	} else {
		t.Logf("without a client certificate: %v", err)
	}
	if c2, err := dialWith(nil); err == nil {
		c2.Close()
		t.Error("dial without TLS succeeded")
	}
	// The in-process client config.
	ci, err := dialWith(s.ClientTLS())
	if err != nil {
		t.Fatalf("dial with ClientTLS: %v", err)
	}
	ci.Close()

	// The system worker runs schedules: one triggered now starts its
	// workflow only if the system worker reaches the frontend.
	const taskQueue = "tls"
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID: "greet-schedule", Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour}}},
		Action:             &client.ScheduleWorkflowAction{ID: "scheduled-greet", Workflow: greetWorkflow, Args: []any{"tls"}, TaskQueue: taskQueue},
		TriggerImmediately: true,
	}); err != nil {
		t.Fatalf("create schedule: %v", err)
	}
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowType = 'greetWorkflow' AND ExecutionStatus = 'Completed'"})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetExecutions()) > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the schedule's workflow did not complete: the system worker does not reach the frontend")
		case <-time.After(200 * time.Millisecond):
		}
	}

	// The Web UI's server reads the namespace through the frontend.
	resp, err := http.Get(s.UIURL() + "/api/v1/namespaces/" + s.Namespace())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var ns struct {
		NamespaceInfo struct{ Name string } `json:"namespaceInfo"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &ns) != nil || ns.NamespaceInfo.Name != s.Namespace() {
		t.Errorf("UI GET /api/v1/namespaces/%s: %d %s", s.Namespace(), resp.StatusCode, body)
	}
}

// TestFrontendTLSErrors checks that unusable TLS files fail Start with an
// error naming the file.
func TestFrontendTLSErrors(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "CA")
	certFile, keyFile := ca.issue(t, dir, "temporal.test", true)
	otherCert, _ := ca.issue(t, dir, "other.test", true)
	notPEM := filepath.Join(dir, "not.pem")
	writeFile(t, notPEM, []byte("hello"))
	cases := []struct {
		name string
		tls  FrontendTLS
		want string
	}{
		{"no key", FrontendTLS{CertFile: certFile}, "both a certificate and its key are required"},
		{"missing cert", FrontendTLS{CertFile: filepath.Join(dir, "nope.pem"), KeyFile: keyFile}, "nope.pem: no such file"},
		{"key of another cert", FrontendTLS{CertFile: otherCert, KeyFile: keyFile}, "private key does not match public key"},
		{"client CA not PEM", FrontendTLS{CertFile: certFile, KeyFile: keyFile, ClientCAFile: notPEM}, "not.pem: no PEM certificate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(context.Background(), Options{DataDir: filepath.Join(dir, "data"), FrontendAddr: "127.0.0.1:0", DisableUI: true,
				Logger: testLogger(t), FrontendTLS: &tc.tls})
			if err == nil {
				_ = s.Stop()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start: %v; want it to say %q", err, tc.want)
			}
		})
	}
}
