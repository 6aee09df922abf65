package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"google.golang.org/grpc/codes"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/temporalserver"
)

// temporalConn is how a2aflow reaches Temporal: the client settings of the
// commands that dial a frontend (api, worker, replay, deployments), and the
// TLS of the frontend that serve and temporal run.
//
// A client setting comes from, first to last: a2aflow's flag or its
// A2AFLOW_* variable; the Temporal SDK's environment configuration
// (go.temporal.io/sdk/contrib/envconfig: TEMPORAL_ADDRESS, TEMPORAL_TLS...
// over the TEMPORAL_PROFILE profile of the temporal.toml file at
// TEMPORAL_CONFIG_FILE or in the user's config folder), as every Temporal
// tool reads it; the flag's default.
type temporalConn struct {
	// flags is where the flags were bound: a setting is a2aflow's when its
	// flag was given (or its A2AFLOW_* variable set).
	flags *pflag.FlagSet

	// Client side (api, worker, replay, deployments).
	TLS        bool
	CertFile   string
	KeyFile    string
	CAFile     string
	ServerName string
	APIKeyFile string

	// Server side (serve, temporal): the embedded frontend's TLS.
	ServerCertFile string
	ServerKeyFile  string
	ClientCAFile   string

	// embedded is set by serve once its embedded server runs: serve dials
	// that server, with its in-process TLS, whatever TEMPORAL_* say.
	embedded *temporalserver.Server

	// opts is the resolved connection, once resolveTemporal ran.
	opts *client.Options
	// describe says how opts connects, for the log (never a secret).
	describe []any
	// apiKeyFrom names where the API key came from, "" without one.
	apiKeyFrom string
}

// Flag names and their A2AFLOW_* variables.
const (
	flagTemporalAddr       = "temporal-addr"
	flagNamespace          = "namespace"
	flagTLS                = "temporal-tls"
	flagTLSCert            = "temporal-tls-cert"
	flagTLSKey             = "temporal-tls-key"
	flagTLSCA              = "temporal-tls-ca"
	flagTLSServerName      = "temporal-tls-server-name"
	flagAPIKeyFile         = "temporal-api-key-file"
	flagTLSServerCert      = "temporal-tls-server-cert"
	flagTLSServerKey       = "temporal-tls-server-key"
	flagTLSClientCA        = "temporal-tls-client-ca"
	envTemporalAddr        = "A2AFLOW_TEMPORAL_ADDR"
	envNamespace           = "A2AFLOW_NAMESPACE"
	envTLS                 = "A2AFLOW_TEMPORAL_TLS"
	envTLSCert             = "A2AFLOW_TEMPORAL_TLS_CERT"
	envTLSKey              = "A2AFLOW_TEMPORAL_TLS_KEY"
	envTLSCA               = "A2AFLOW_TEMPORAL_TLS_CA"
	envTLSServerName       = "A2AFLOW_TEMPORAL_TLS_SERVER_NAME"
	envAPIKeyFile          = "A2AFLOW_TEMPORAL_API_KEY_FILE"
	envTLSServerCert       = "A2AFLOW_TEMPORAL_TLS_SERVER_CERT"
	envTLSServerKey        = "A2AFLOW_TEMPORAL_TLS_SERVER_KEY"
	envTLSClientCA         = "A2AFLOW_TEMPORAL_TLS_CLIENT_CA"
	defaultTemporalAddress = "127.0.0.1:7233"
)

// bindClient binds the client-side connection flags. The address and
// namespace flags are bound by the caller on the same flag set.
func (t *temporalConn) bindClient(fs *pflag.FlagSet) {
	t.flags = fs
	b := cmdutil.Bind(fs)
	b.Bool(&t.TLS, flagTLS, envTLS, false,
		"dial Temporal over TLS; implied by a client certificate, a CA, a server name or an API key; --temporal-tls=false dials plain gRPC even then",
		cmdutil.Else("TEMPORAL_TLS"))
	b.String(&t.CertFile, flagTLSCert, envTLSCert, "",
		"client certificate file (PEM) for mutual TLS, with --temporal-tls-key", cmdutil.Else("TEMPORAL_TLS_CLIENT_CERT_PATH"))
	b.String(&t.KeyFile, flagTLSKey, envTLSKey, "",
		"the client certificate's private key file (PEM)", cmdutil.Else("TEMPORAL_TLS_CLIENT_KEY_PATH"))
	b.String(&t.CAFile, flagTLSCA, envTLSCA, "",
		"CA certificates file (PEM) that the frontend's certificate must chain to; default the system's roots", cmdutil.Else("TEMPORAL_TLS_SERVER_CA_CERT_PATH"))
	b.String(&t.ServerName, flagTLSServerName, envTLSServerName, "",
		"name the frontend's certificate must carry; default the host of the address dialed", cmdutil.Else("TEMPORAL_TLS_SERVER_NAME"))
	b.String(&t.APIKeyFile, flagAPIKeyFile, envAPIKeyFile, "",
		"file holding a Temporal API key (Temporal Cloud), sent over TLS; or the key itself in TEMPORAL_API_KEY")
}

// bindServer binds the embedded frontend's TLS flags (serve, temporal).
func (t *temporalConn) bindServer(fs *pflag.FlagSet) {
	t.flags = fs
	b := cmdutil.Bind(fs)
	b.String(&t.ServerCertFile, flagTLSServerCert, envTLSServerCert, "",
		"serve the embedded Temporal frontend over TLS with this certificate file (PEM, intermediates after it), with --temporal-tls-server-key; read at start")
	b.String(&t.ServerKeyFile, flagTLSServerKey, envTLSServerKey, "",
		"the frontend certificate's private key file (PEM)")
	b.String(&t.ClientCAFile, flagTLSClientCA, envTLSClientCA, "",
		"require client certificates signed by a CA of this file (PEM): mutual TLS, the frontend's authentication; needs --temporal-tls-server-cert")
}

// frontendTLS is the embedded frontend's TLS from the server-side flags, nil
// for plain gRPC.
func (t *temporalConn) frontendTLS() (*temporalserver.FrontendTLS, error) {
	switch {
	case t.ServerCertFile == "" && t.ServerKeyFile == "" && t.ClientCAFile == "":
		return nil, nil
	case t.ServerCertFile == "":
		return nil, fmt.Errorf("--%s and --%s need the frontend's certificate: --%s (%s)", flagTLSServerKey, flagTLSClientCA, flagTLSServerCert, envTLSServerCert)
	case t.ServerKeyFile == "":
		return nil, fmt.Errorf("--%s needs its private key: --%s (%s)", flagTLSServerCert, flagTLSServerKey, envTLSServerKey)
	}
	return &temporalserver.FrontendTLS{CertFile: t.ServerCertFile, KeyFile: t.ServerKeyFile, ClientCAFile: t.ClientCAFile}, nil
}

// useEmbedded makes the client of serve dial its own embedded server.
func (t *temporalConn) useEmbedded(srv *temporalserver.Server) { t.embedded = srv }

// frontendNote is what serve's and temporal's printouts say about the
// frontend listening on addr: its TLS, and whether it is open to anyone.
func (t *temporalConn) frontendNote(addr string, srv *temporalserver.Server) string {
	on, mutual := srv.TLS()
	switch {
	case mutual && exposed(addr):
		return "; mutual TLS, open to the network"
	case mutual:
		return "; mutual TLS"
	case on:
		return "; TLS" + frontendNote(addr)
	}
	return frontendNote(addr)
}

// given reports whether a2aflow's flag name (or its variable key) was set.
func (t *temporalConn) given(name, key string) bool {
	if t.flags != nil {
		if f := t.flags.Lookup(name); f != nil && f.Changed {
			return true
		}
	}
	return os.Getenv(key) != ""
}

// origin names where a client setting came from, for error messages: the
// flag, the A2AFLOW_* variable, the TEMPORAL_* variable or the profile.
func (t *temporalConn) origin(name, key, temporalKey string) string {
	switch {
	case t.flags != nil && t.flags.Lookup(name) != nil && t.flags.Lookup(name).Changed:
		return "--" + name
	case os.Getenv(key) != "":
		return key
	case os.Getenv(temporalKey) != "":
		return temporalKey
	}
	return "the Temporal profile (" + profileFile() + ")"
}

// profileFile names the temporal.toml file and profile envconfig reads.
func profileFile() string {
	file := os.Getenv("TEMPORAL_CONFIG_FILE")
	if file == "" {
		file = envconfig.DefaultConfigFilePath()
	}
	profile := os.Getenv("TEMPORAL_PROFILE")
	if profile == "" {
		profile = envconfig.DefaultConfigFileProfile
	}
	return fmt.Sprintf("profile %q of %s", profile, file)
}

// temporalClientOptions returns opts (the caller's logger, storage...)
// connected as resolveTemporal found: address, namespace, TLS, API key, gRPC
// headers. Every command that dials Temporal builds its options here.
func (c *config) temporalClientOptions(opts client.Options) (client.Options, error) {
	if err := c.resolveTemporal(); err != nil {
		return opts, err
	}
	r := c.Conn.opts
	opts.MetricsHandler = temporalMetrics(opts.MetricsHandler) // metrics.go: the SDK's series at /metrics
	opts.HostPort, opts.Namespace = r.HostPort, r.Namespace
	opts.Credentials, opts.HeadersProvider = r.Credentials, r.HeadersProvider
	opts.ConnectionOptions.TLS = r.ConnectionOptions.TLS
	opts.ConnectionOptions.TLSDisabled = r.ConnectionOptions.TLSDisabled
	opts.ConnectionOptions.Authority = r.ConnectionOptions.Authority
	opts.ConnectionOptions.GrpcCompression = r.ConnectionOptions.GrpcCompression
	opts.Interceptors = append(opts.Interceptors, tracingInterceptors()...) // tracing.go
	return opts, nil
}

// resolveTemporal works out the connection to Temporal once, and sets
// c.TemporalAddr and c.Namespace to the address and namespace used: call it
// before anything reads them.
func (c *config) resolveTemporal() error {
	t := &c.Conn
	if t.opts != nil {
		return nil
	}
	if t.embedded != nil {
		opts := client.Options{HostPort: c.TemporalAddr, Namespace: c.Namespace}
		opts.ConnectionOptions.TLS = t.embedded.ClientTLS()
		// The embedded server is in this process, over loopback: gzip (the
		// SDK's default) would only spend CPU on both ends of every call.
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
		t.opts, t.describe = &opts, []any{"tls", tlsMode(opts)}
		return nil
	}
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{})
	if err != nil {
		return fmt.Errorf("Temporal client configuration (TEMPORAL_* variables, %s): %w", profileFile(), err)
	}
	if err := t.override(&prof, c.TemporalAddr, c.Namespace); err != nil {
		return err
	}
	if err := t.checkTLSFiles(prof.TLS); err != nil {
		return err
	}
	opts, err := prof.ToClientOptions(envconfig.ToClientOptionsRequest{})
	if err != nil {
		return fmt.Errorf("Temporal client configuration: %w", err)
	}
	c.TemporalAddr, c.Namespace = opts.HostPort, opts.Namespace
	t.opts = &opts
	t.describe = []any{"tls", tlsMode(opts)}
	if t.apiKeyFrom != "" {
		t.describe = append(t.describe, "api_key_from", t.apiKeyFrom)
	}
	if opts.ConnectionOptions.TLS != nil && opts.ConnectionOptions.TLS.InsecureSkipVerify {
		t.describe = append(t.describe, "host_verification", "off (TEMPORAL_TLS_DISABLE_HOST_VERIFICATION)")
	}
	return nil
}

// override sets in prof, the SDK's client configuration (TEMPORAL_*
// variables, temporal.toml), what a2aflow's own settings give: they win.
// addr and namespace are --temporal-addr and --namespace.
func (t *temporalConn) override(prof *envconfig.ClientConfigProfile, addr, namespace string) error {
	if t.given(flagTemporalAddr, envTemporalAddr) || prof.Address == "" {
		prof.Address = addr
	}
	if t.given(flagNamespace, envNamespace) || prof.Namespace == "" {
		prof.Namespace = namespace
	}
	tlsOf := func() *envconfig.ClientConfigTLS {
		if prof.TLS == nil {
			prof.TLS = &envconfig.ClientConfigTLS{}
		}
		return prof.TLS
	}
	if t.given(flagTLSCert, envTLSCert) {
		tlsOf().ClientCertPath, prof.TLS.ClientCertData = t.CertFile, nil
	}
	if t.given(flagTLSKey, envTLSKey) {
		tlsOf().ClientKeyPath, prof.TLS.ClientKeyData = t.KeyFile, nil
	}
	if t.given(flagTLSCA, envTLSCA) {
		tlsOf().ServerCACertPath, prof.TLS.ServerCACertData = t.CAFile, nil
	}
	if t.given(flagTLSServerName, envTLSServerName) {
		tlsOf().ServerName = t.ServerName
	}
	if t.given(flagTLS, envTLS) {
		if v := os.Getenv(envTLS); v != "" && !t.flags.Changed(flagTLS) {
			if _, err := strconv.ParseBool(v); err != nil {
				return fmt.Errorf("%s=%s: want true or false", envTLS, v)
			}
		}
		tlsOf().Disabled = !t.TLS
	}
	if t.given(flagAPIKeyFile, envAPIKeyFile) {
		raw, err := os.ReadFile(t.APIKeyFile)
		if err != nil {
			return fmt.Errorf("Temporal API key (%s): %w", t.origin(flagAPIKeyFile, envAPIKeyFile, ""), err)
		}
		// Editors end files with a newline that is not part of the key.
		if prof.APIKey = strings.TrimSpace(string(raw)); prof.APIKey == "" {
			return fmt.Errorf("Temporal API key file %s is empty", t.APIKeyFile)
		}
		t.apiKeyFrom = t.origin(flagAPIKeyFile, envAPIKeyFile, "")
	} else if prof.APIKey != "" {
		t.apiKeyFrom = t.origin("", "", "TEMPORAL_API_KEY")
	}
	return nil
}

// tlsMode names how opts dials: plain, TLS or mutual TLS.
func tlsMode(opts client.Options) string {
	c := opts.ConnectionOptions.TLS
	switch {
	case c == nil || opts.ConnectionOptions.TLSDisabled:
		return "off"
	case len(c.Certificates) > 0 || c.GetClientCertificate != nil:
		return "mutual"
	}
	return "on"
}

// checkTLSFiles reads the TLS files the connection names, so that a missing
// file, a key of another certificate, an expired certificate or a file
// without a certificate is one line naming the file and the setting, before
// any dial.
func (t *temporalConn) checkTLSFiles(c *envconfig.ClientConfigTLS) error {
	if c == nil || c.Disabled {
		return nil
	}
	certFrom := t.origin(flagTLSCert, envTLSCert, "TEMPORAL_TLS_CLIENT_CERT_PATH")
	keyFrom := t.origin(flagTLSKey, envTLSKey, "TEMPORAL_TLS_CLIENT_KEY_PATH")
	hasCert := c.ClientCertPath != "" || len(c.ClientCertData) > 0
	hasKey := c.ClientKeyPath != "" || len(c.ClientKeyData) > 0
	switch {
	case hasCert && !hasKey:
		return fmt.Errorf("the Temporal client certificate (%s) needs its private key: --%s, %s or TEMPORAL_TLS_CLIENT_KEY_PATH", certFrom, flagTLSKey, envTLSKey)
	case hasKey && !hasCert:
		return fmt.Errorf("the Temporal client key (%s) needs its certificate: --%s, %s or TEMPORAL_TLS_CLIENT_CERT_PATH", keyFrom, flagTLSCert, envTLSCert)
	case hasCert:
		certPEM, err := readPEM(c.ClientCertPath, c.ClientCertData)
		if err != nil {
			return fmt.Errorf("the Temporal client certificate (%s): %w", certFrom, err)
		}
		keyPEM, err := readPEM(c.ClientKeyPath, c.ClientKeyData)
		if err != nil {
			return fmt.Errorf("the Temporal client key (%s): %w", keyFrom, err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return fmt.Errorf("the Temporal client certificate %s and key %s do not make a pair: %w", nameOr(c.ClientCertPath, certFrom), nameOr(c.ClientKeyPath, keyFrom), err)
		}
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil {
			if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
				return fmt.Errorf("the Temporal client certificate %s is valid from %s to %s only", nameOr(c.ClientCertPath, certFrom),
					leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
			}
		}
	}
	if c.ServerCACertPath != "" || len(c.ServerCACertData) > 0 {
		caFrom := t.origin(flagTLSCA, envTLSCA, "TEMPORAL_TLS_SERVER_CA_CERT_PATH")
		caPEM, err := readPEM(c.ServerCACertPath, c.ServerCACertData)
		if err != nil {
			return fmt.Errorf("the Temporal server CA (%s): %w", caFrom, err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(caPEM) {
			return fmt.Errorf("the Temporal server CA %s holds no PEM certificate", nameOr(c.ServerCACertPath, caFrom))
		}
	}
	return nil
}

// readPEM returns data, or the file's content.
func readPEM(file string, data []byte) ([]byte, error) {
	if len(data) > 0 {
		if block, _ := pem.Decode(data); block == nil {
			return nil, errors.New("not PEM")
		}
		return data, nil
	}
	return os.ReadFile(file)
}

func nameOr(file, from string) string {
	if file != "" {
		return file
	}
	return "(" + from + ")"
}

// dialFailure says why a dial failed, as one line, when retrying would not
// help: a TLS mismatch, a certificate either side refuses, credentials the
// server refuses. It returns nil when the server may just not be up yet.
func dialFailure(ctx context.Context, opts client.Options, err error) error {
	switch serviceerror.ToStatus(err).Code() {
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Errorf("Temporal at %s refused this client's credentials (API key or certificate): %v", opts.HostPort, err)
	}
	if why := probeTLS(ctx, opts); why != "" {
		return fmt.Errorf("connect to Temporal at %s: %s", opts.HostPort, why)
	}
	return nil
}

// probeTLS opens one TLS connection to the frontend as the client would
// and reads the server's first bytes: TLS 1.3 servers refuse a client
// certificate only after the handshake, and the gRPC error then reads as a
// broken pipe. Without TLS it checks whether the server speaks TLS. It
// returns "" when TLS is not what failed.
func probeTLS(ctx context.Context, opts client.Options) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cfg := opts.ConnectionOptions.TLS
	plain := cfg == nil || opts.ConnectionOptions.TLSDisabled
	if plain {
		cfg = &tls.Config{InsecureSkipVerify: true} // only to learn whether it speaks TLS
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2"}
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(opts.HostPort); err == nil {
			cfg.ServerName = host
		}
	}
	d := tls.Dialer{Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", opts.HostPort)
	if err == nil {
		defer conn.Close()
		// A gRPC server speaks first (its HTTP/2 settings); a TLS 1.3
		// server refusing the client's certificate sends an alert instead.
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			err = nil
		}
	}
	if plain {
		var alert tls.AlertError
		if err == nil || errors.As(err, &alert) || strings.Contains(fmt.Sprint(err), "remote error: tls:") {
			return "the frontend serves TLS and this client dials without: set --temporal-tls (TEMPORAL_TLS=true), with --temporal-tls-ca if its CA is not a system root"
		}
		return ""
	}
	if err == nil {
		return ""
	}
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		header   tls.RecordHeaderError
		opErr    *net.OpError
	)
	msg := err.Error()
	switch {
	case errors.As(err, &unknown):
		issuer := ""
		if unknown.Cert != nil {
			issuer = fmt.Sprintf(" (issued by %q)", unknown.Cert.Issuer.String())
		}
		return fmt.Sprintf("the frontend's certificate%s is not signed by a CA this client trusts: give its CA with --temporal-tls-ca or TEMPORAL_TLS_SERVER_CA_CERT_PATH (%v)", issuer, err)
	case errors.As(err, &hostname):
		return fmt.Sprintf("the frontend's certificate is not valid for %q: dial a name it carries, or set --temporal-tls-server-name or TEMPORAL_TLS_SERVER_NAME (%v)", hostname.Host, err)
	case errors.As(err, &invalid):
		return fmt.Sprintf("the frontend's certificate is not valid: %v", err)
	case errors.As(err, &header):
		return "the frontend does not speak TLS, and TLS is on here (--temporal-tls, TEMPORAL_TLS, a TLS setting or an API key): dial it without (--temporal-tls=false)"
	case strings.Contains(msg, "remote error: tls: certificate required") && clientCertName(cfg) != "":
		// Go sends no certificate that the server's list of CAs excludes.
		return fmt.Sprintf("the frontend refused this client's certificate%s: it is not signed by a CA the frontend trusts (%s)", clientCertName(cfg), strings.TrimPrefix(msg, "remote error: "))
	case strings.Contains(msg, "remote error: tls: certificate required"):
		return fmt.Sprintf("the frontend requires a client certificate (mutual TLS): give --%s and --%s (TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)", flagTLSCert, flagTLSKey)
	case strings.Contains(msg, "remote error: tls: unknown certificate authority"), strings.Contains(msg, "remote error: tls: bad certificate"):
		return fmt.Sprintf("the frontend refused this client's certificate%s: it is not signed by a CA the frontend trusts (%s)", clientCertName(cfg), strings.TrimPrefix(msg, "remote error: "))
	case strings.Contains(msg, "remote error: tls:"):
		return fmt.Sprintf("the frontend refused the TLS connection%s: %s", clientCertName(cfg), msg[strings.Index(msg, "remote error: tls:"):])
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "" // not listening (yet)
	case strings.Contains(msg, "tls:"):
		return fmt.Sprintf("TLS with the frontend failed: %v", err)
	}
	return ""
}

// clientCertName is " (subject, issued by issuer)" of the client
// certificate in cfg, or "".
func clientCertName(cfg *tls.Config) string {
	if len(cfg.Certificates) == 0 || len(cfg.Certificates[0].Certificate) == 0 {
		return ""
	}
	leaf, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (%q, issued by %q)", leaf.Subject.String(), leaf.Issuer.String())
}
