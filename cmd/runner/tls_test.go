package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/certs"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestStatisticsOverTLSVerifyOnlyWithACA: a real redis-server serving TLS
// only, with the certificates the operator issues. The statistics poller
// means what the session check and the query engine mean (one
// pod.TLSClient): without a CA the connection is encrypted and the server's
// certificate not verified, the figures are read and the result says
// serverCertificateVerified=false (it used to verify against the system's
// roots, and so never read a server of the operator's own CA); with the
// target's CA it verifies and says true; with another CA it refuses the
// server, a warning, and the measurement stands.
func TestStatisticsOverTLSVerifyOnlyWithACA(t *testing.T) {
	server, _, err := certs.ServerSecrets("tls", []string{"localhost"}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := certs.ServerSecrets("other", []string{"localhost"}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	serverDir, otherDir := testutil.WriteTLSDirs(t, "dbperf-redis-tls-", server, other)
	rd := testutil.StartRedisWith(t, func(port int, dir string) []string {
		return []string{"--port", "0", "--tls-port", strconv.Itoa(port), "--dir", dir, "--save", "",
			"--tls-cert-file", serverDir + "/tls.crt", "--tls-key-file", serverDir + "/tls.key",
			"--tls-ca-cert-file", serverDir + "/ca.crt", "--tls-auth-clients", "no"}
	})
	fixture := filepath.Join(testutil.FixturesDir(t, "pgbench"), "pg14plus-tpcb-scale50-haproxy.txt")
	for name, tc := range map[string]struct {
		ca       string
		figures  bool
		verified string
	}{
		"no CA: encrypted, not verified": {"", true, "false"},
		"the target's CA: verified":      {serverDir + "/ca.crt", true, "true"},
		"another CA: refused":            {otherDir + "/ca.crt", false, "true"},
	} {
		t.Run(name, func(t *testing.T) {
			zero := 0.0
			c := pod.ExecCommand{Workload: "pgbench", MaxLoadGeneratorCPUPercent: &zero, Command: []string{"cat", fixture},
				Statistics: pod.Statistics{Protocol: pod.ProtocolRedis, Address: pod.Address{Host: "127.0.0.1", Port: rd.Port},
					PollInterval: 200 * time.Millisecond, TLS: pod.TLSClient{Enabled: true, CAFile: tc.ca, ServerName: "localhost"}}}
			code, out, r := execRunner(t, c.Args()[1:]...)
			if code != runner.ExitValid {
				t.Fatalf("exit %d: %v\n%s", code, r.Reasons, out)
			}
			_, read := r.Get(results.Key{Name: "serverCPUCores", Operation: "server"})
			warned := strings.Contains(strings.Join(r.Warnings, "\n"), "could not be read")
			t.Logf("figures read: %v; warnings %q; parameters %v", read, r.Warnings, r.Parameters)
			if read != tc.figures || warned == tc.figures {
				t.Errorf("figures read %v (want %v), warned %v", read, tc.figures, warned)
			}
			if got := r.Parameters[pod.ParamServerCertificateVerified]; got != tc.verified {
				t.Errorf("%s = %q, want %q", pod.ParamServerCertificateVerified, got, tc.verified)
			}
		})
	}
}
