package sessioncheck

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/dbperf-io/dbperf-operator/internal/tlsciphers"
)

// TLSRequest is how the workload's client asks for TLS: the files of
// pod.TLSDir and the version and cipher of the endpoint.
type TLSRequest struct {
	CAFile, CertFile, KeyFile string
	// ServerName the certificate must carry; empty: the host.
	ServerName string
	// Version is TLSv1.2 or TLSv1.3; empty: either.
	Version string
	// Cipher is an IANA or OpenSSL name; empty: any.
	Cipher string
}

// Config is the client's TLS configuration of the request. Go lets a
// client choose among TLS 1.2 suites only: for a TLS 1.3 suite (or one Go
// does not implement) it asks for none in particular, and the check is
// what the server negotiated; note says so.
func (t TLSRequest) Config(host string) (cfg *tls.Config, note string, err error) {
	cfg = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	switch t.Version {
	case "":
	case "TLSv1.2":
		cfg.MaxVersion = tls.VersionTLS12
	case "TLSv1.3":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
	default:
		return nil, "", fmt.Errorf("TLS version %q: want TLSv1.2 or TLSv1.3", t.Version)
	}
	if c := t.Cipher; c != "" && !tlsciphers.IsTLS13(c) {
		if id, ok := tlsciphers.GoID(c); ok {
			cfg.CipherSuites = []uint16{id}
		} else {
			note = fmt.Sprintf("the session check cannot ask for the cipher %s (Go does not implement it): it checks the one the server negotiated", c)
		}
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, "", fmt.Errorf("while reading the CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, "", fmt.Errorf("no PEM certificate in %s", t.CAFile)
		}
		cfg.RootCAs = pool
	} else {
		// As the tools do without a CA: encrypted, not verified.
		cfg.InsecureSkipVerify = true
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, "", errors.New("a client certificate and its key go together")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, "", fmt.Errorf("while reading the client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, note, nil
}
