package temporalserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"go.temporal.io/server/common/config"
)

// FrontendTLS makes the frontend serve TLS, and with ClientCAFile mutual
// TLS. The files are read once, by Start: a renewed certificate is served
// after a restart.
type FrontendTLS struct {
	// CertFile is the PEM file of the frontend's certificate, followed by
	// its intermediate certificates if any. Required.
	CertFile string
	// KeyFile is the PEM file of the certificate's private key. Required.
	KeyFile string
	// ClientCAFile, when set, is a PEM file of the CAs whose client
	// certificates the frontend accepts: every client must present one
	// (mutual TLS). Empty: any client may connect, over TLS.
	ClientCAFile string
}

// internalClientName is the subject of the certificate the server's own
// clients present to a frontend that requires client certificates.
const internalClientName = "a2aflow-embedded-temporal-internal"

// frontendTLS is FrontendTLS loaded: the operator's certificate, key and
// client CAs, and what the server's own clients (the system worker, the Web
// UI, the readiness and namespace checks, the caller's in-process clients)
// use to reach the frontend.
//
// Those clients trust exactly the frontend's certificate (pinned: it is
// their root), under one of its names, since they dial it on loopback. With
// client certificates required they present a certificate of an internal CA
// that is generated at every start, kept in memory only and trusted by the
// frontend beside the operator's client CAs; its private key is dropped
// once the one certificate is signed.
type frontendTLS struct {
	certPEM, keyPEM []byte
	clientCAPEM     []byte // nil: no client certificates asked for
	serverName      string // a name of the certificate the internal clients verify

	internalCAPEM                   []byte
	internalCertPEM, internalKeyPEM []byte
}

// loadFrontendTLS reads and checks o's files and makes the internal client
// certificate, with errors naming the file at fault.
func loadFrontendTLS(o *FrontendTLS) (*frontendTLS, error) {
	if o.CertFile == "" || o.KeyFile == "" {
		return nil, errors.New("temporal frontend TLS: both a certificate and its key are required")
	}
	f := &frontendTLS{}
	var err error
	if f.certPEM, err = os.ReadFile(o.CertFile); err != nil {
		return nil, fmt.Errorf("temporal frontend TLS certificate: %w", err)
	}
	if f.keyPEM, err = os.ReadFile(o.KeyFile); err != nil {
		return nil, fmt.Errorf("temporal frontend TLS key: %w", err)
	}
	pair, err := tls.X509KeyPair(f.certPEM, f.keyPEM)
	if err != nil {
		return nil, fmt.Errorf("temporal frontend TLS certificate %s with key %s: %w", o.CertFile, o.KeyFile, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("temporal frontend TLS certificate %s: %w", o.CertFile, err)
	}
	if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		return nil, fmt.Errorf("temporal frontend TLS certificate %s is valid from %s to %s only", o.CertFile,
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if f.serverName, err = nameOf(leaf); err != nil {
		return nil, fmt.Errorf("temporal frontend TLS certificate %s: %w", o.CertFile, err)
	}
	if o.ClientCAFile != "" {
		if f.clientCAPEM, err = os.ReadFile(o.ClientCAFile); err != nil {
			return nil, fmt.Errorf("temporal frontend TLS client CA: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(f.clientCAPEM) {
			return nil, fmt.Errorf("temporal frontend TLS client CA %s: no PEM certificate in it", o.ClientCAFile)
		}
	}
	if err := f.makeInternalClient(); err != nil {
		return nil, fmt.Errorf("temporal frontend TLS: internal client certificate: %w", err)
	}
	return f, nil
}

// nameOf returns a name the certificate is valid for: its first DNS name
// (a wildcard's first label filled in), else its first IP address.
func nameOf(c *x509.Certificate) (string, error) {
	for _, n := range c.DNSNames {
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			return "a2aflow-internal." + rest, nil
		}
		if n != "" {
			return n, nil
		}
	}
	if len(c.IPAddresses) > 0 {
		return c.IPAddresses[0].String(), nil
	}
	return "", errors.New("it names no host (no DNS name or IP address among its subject alternative names)")
}

// makeInternalClient generates the internal CA and the one client
// certificate it signs.
func (f *frontendTLS) makeInternalClient() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "a2aflow embedded Temporal internal CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	leaf := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: internalClientName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	f.internalCAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	f.internalCertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
	f.internalKeyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return nil
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// mutual reports whether the frontend requires client certificates.
func (f *frontendTLS) mutual() bool { return f.clientCAPEM != nil }

// rootTLS is the server's TLS config: the frontend (gRPC and HTTP) serves
// the operator's certificate and, for mutual TLS, accepts the operator's
// client CAs and the internal one; the system worker dials it as an
// internal client. The internal services keep talking plain gRPC on
// loopback.
func (f *frontendTLS) rootTLS() config.RootTLS {
	b64 := base64.StdEncoding.EncodeToString
	server := config.ServerTLS{CertData: b64(f.certPEM), KeyData: b64(f.keyPEM)}
	if f.mutual() {
		server.RequireClientAuth = true
		server.ClientCAData = []string{b64(f.clientCAPEM), b64(f.internalCAPEM)}
	}
	return config.RootTLS{
		Frontend: config.GroupTLS{Server: server},
		SystemWorker: config.WorkerTLS{
			CertData: b64(f.internalCertPEM),
			KeyData:  b64(f.internalKeyPEM),
			Client: config.ClientTLS{
				ServerName: f.serverName,
				RootCAData: []string{b64(f.certPEM)},
			},
		},
	}
}

// clientConfig is the TLS config of the server's in-process clients.
func (f *frontendTLS) clientConfig() *tls.Config {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(f.certPEM)
	c := &tls.Config{RootCAs: roots, ServerName: f.serverName, MinVersion: tls.VersionTLS12}
	if f.mutual() {
		pair, err := tls.X509KeyPair(f.internalCertPEM, f.internalKeyPEM)
		if err != nil {
			panic(err) // made by makeInternalClient
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c
}

// uiTLS is the Web UI server's TLS config for its connection to the
// frontend.
func (f *frontendTLS) uiTLS() uiconfig.TLS {
	b64 := base64.StdEncoding.EncodeToString
	t := uiconfig.TLS{CaData: b64(f.certPEM), ServerName: f.serverName, EnableHostVerification: true}
	if f.mutual() {
		t.CertData, t.KeyData = b64(f.internalCertPEM), b64(f.internalKeyPEM)
	}
	return t
}
