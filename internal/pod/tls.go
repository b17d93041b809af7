package pod

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSClient is the TLS of one connection from a workload pod to the
// target, with the files the pod mounts (Endpoint.ClientTLS). Every
// connection of the runner (the statistics poller, the session check, the
// query engine) is built from one, so that all three mean the same.
type TLSClient struct {
	// Enabled encrypts the connection; the rest is read only then.
	Enabled bool
	// CAFile is the CA bundle that verifies the server's certificate: its
	// chain and ServerName. Empty: the connection is encrypted and the
	// certificate is not verified (as the API documents for a TLS
	// endpoint without caSecretRef, and as the tools do: libpq's
	// sslmode=require). ServerCertificateVerified records which.
	CAFile string
	// CertFile and KeyFile are the client certificate of two-way TLS.
	CertFile, KeyFile string
	// ServerName is the name the server's certificate must carry; empty:
	// the host connected to.
	ServerName string
}

// ParamServerCertificateVerified is the result parameter in which the
// runner's own connections over TLS record whether they verified the
// server's certificate ("true", "false"); absent without TLS.
const ParamServerCertificateVerified = "serverCertificateVerified"

// Verifies says whether the connection checks the server's certificate.
func (c TLSClient) Verifies() bool { return c.Enabled && c.CAFile != "" }

// Config is the client's TLS configuration for a connection to host; nil
// when TLS is not enabled.
func (c TLSClient) Config(host string) (*tls.Config, error) {
	if !c.Enabled {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("while reading the target's CA: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the target's CA file %s holds no PEM certificate", c.CAFile)
		}
	} else {
		// Encrypted, not verified: what the API promises without a CA and
		// what the tools themselves do, so that the runner reaches the
		// server the tool measured. The result says so.
		cfg.InsecureSkipVerify = true //nolint:gosec // chosen on purpose, see above and docs/security.md
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("a client certificate and its key go together")
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("while reading the client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// tlsFlagNames spell a TLSClient's flags on one command line
// (flagnames.go): each connection of the pod has its own.
type tlsFlagNames struct{ enabled, ca, cert, key, serverName string }

func (c *TLSClient) bind(t *flagTable, n tlsFlagNames) {
	t.boolean(&c.Enabled, n.enabled, "connect over TLS")
	t.str(&c.CAFile, n.ca, "", "CA bundle that verifies the server's certificate (empty: encrypted, not verified)")
	t.str(&c.CertFile, n.cert, "", "client certificate of two-way TLS")
	t.str(&c.KeyFile, n.key, "", "client key of two-way TLS")
	t.str(&c.ServerName, n.serverName, "", "name the server's certificate must carry (default: the host)")
}
