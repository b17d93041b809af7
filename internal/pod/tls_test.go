package pod

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/certs"
)

// One meaning for every connection of the pod: with a CA the server's
// certificate and name are verified, without one the connection is
// encrypted only; a broken CA or half a client certificate is an error,
// never a silent downgrade.
func TestTLSClientConfig(t *testing.T) {
	server, client, err := certs.ServerSecrets("tls", []string{"db"}, "bench", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"ca.crt": server["ca.crt"], "tls.crt": client["tls.crt"], "tls.key": client["tls.key"], "empty.crt": nil} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ca, cert, key := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for name, tc := range map[string]struct {
		client            TLSClient
		off, verify, fail bool
		serverName        string
	}{
		"disabled":                  {client: TLSClient{CAFile: ca}, off: true},
		"no CA: not verified":       {client: TLSClient{Enabled: true}, serverName: "10.0.0.7"},
		"a CA: verified":            {client: TLSClient{Enabled: true, CAFile: ca, ServerName: "db"}, verify: true, serverName: "db"},
		"two-way TLS":               {client: TLSClient{Enabled: true, CAFile: ca, CertFile: cert, KeyFile: key}, verify: true, serverName: "10.0.0.7"},
		"a certificate without key": {client: TLSClient{Enabled: true, CertFile: cert}, fail: true},
		"a CA file without PEM":     {client: TLSClient{Enabled: true, CAFile: filepath.Join(dir, "empty.crt")}, fail: true},
		"a missing CA file":         {client: TLSClient{Enabled: true, CAFile: filepath.Join(dir, "none.crt")}, fail: true},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := tc.client.Config("10.0.0.7")
			switch {
			case tc.fail || err != nil:
				if !tc.fail || err == nil {
					t.Fatalf("error %v, want one: %v", err, tc.fail)
				}
				return
			case tc.off:
				if cfg != nil {
					t.Fatalf("TLS off, yet a configuration: %+v", cfg)
				}
				return
			}
			if cfg.InsecureSkipVerify == tc.verify || (cfg.RootCAs != nil) != tc.verify || tc.client.Verifies() != tc.verify {
				t.Errorf("verifies %v, want %v (roots %v)", !cfg.InsecureSkipVerify, tc.verify, cfg.RootCAs != nil)
			}
			if cfg.ServerName != tc.serverName || (len(cfg.Certificates) == 1) != (tc.client.CertFile != "") {
				t.Errorf("server name %q (want %q), %d client certificates", cfg.ServerName, tc.serverName, len(cfg.Certificates))
			}
		})
	}
}
