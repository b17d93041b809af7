package sessioncheck

import (
	"crypto/tls"
	"fmt"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/tlsciphers"
)

// TLSConfig is the client's TLS configuration of the check: the workload's
// client TLS (pod.TLSClient.Config) asking for version (TLSv1.2 or
// TLSv1.3; empty: either) and cipher (an IANA or OpenSSL name; empty:
// any). Go lets a client choose among TLS 1.2 suites only: for a TLS 1.3
// suite (or one Go does not implement) it asks for none in particular, and
// the check is what the server negotiated; note says so.
func TLSConfig(c pod.TLSClient, host, version, cipher string) (cfg *tls.Config, note string, err error) {
	if cfg, err = c.Config(host); err != nil || cfg == nil {
		return cfg, "", err
	}
	switch version {
	case "":
	case "TLSv1.2":
		cfg.MaxVersion = tls.VersionTLS12
	case "TLSv1.3":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
	default:
		return nil, "", fmt.Errorf("TLS version %q: want TLSv1.2 or TLSv1.3", version)
	}
	if cipher != "" && !tlsciphers.IsTLS13(cipher) {
		if id, ok := tlsciphers.GoID(cipher); ok {
			cfg.CipherSuites = []uint16{id}
		} else {
			note = fmt.Sprintf("the session check cannot ask for the cipher %s (Go does not implement it): it checks the one the server negotiated", cipher)
		}
	}
	return cfg, note, nil
}
