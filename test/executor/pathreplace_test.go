package executor

import (
	"strings"
	"testing"
)

func TestPathReplacerWholePaths(t *testing.T) {
	r := pathReplacer{{"/etc/dbperf/tls", "/w/tls"}, {"/dbperf", "/w/dbperf"}, {"/opt/ycsb/lib", "/c/lib"}}
	for in, want := range map[string]string{
		"diset connection mysql_ssl_linux_capath /etc/dbperf/tls\n": "diset connection mysql_ssl_linux_capath /w/tls\n",
		"ca /etc/dbperf/tls/ca.crt":                                 "ca /w/tls/ca.crt",
		"out=/dbperf/out/x.json":                                    "out=/w/dbperf/out/x.json",
		"/dbperfx/y /x/dbperf/y":                                    "/dbperfx/y /x/dbperf/y",
		"cp /opt/ycsb/lib/*:/opt/ycsb/lib":                          "cp /c/lib/*:/c/lib",
		`"/dbperf"`:                                                 `"/w/dbperf"`,
	} {
		if got := r.Replace(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

// The runner's TLS clients keep checking the Service's name when the
// executor points them at a loopback address.
func TestKeepTLSNameForEveryTLSClient(t *testing.T) {
	argv := []string{"dbperf-runner", "exec", "--server-address", "r-valkey.perf.svc:6379", "--server-tls",
		"--session-check", "r-mysql.perf.svc.cluster.local:3306", "--session-tls", "--", "tool"}
	got := strings.Join(keepTLSName(argv), " ")
	want := "dbperf-runner exec --server-address r-valkey.perf.svc:6379 --server-tls-name r-valkey.perf.svc --server-tls " +
		"--session-check r-mysql.perf.svc.cluster.local:3306 --session-tls-name r-mysql.perf.svc.cluster.local --session-tls -- tool"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// A name given is kept; a client without TLS gets none.
	argv = []string{"dbperf-runner", "exec", "--session-check", "r-mysql.perf.svc:3306", "--session-tls", "--session-tls-name", "db", "--server-address", "r.perf.svc:1"}
	if got := strings.Join(keepTLSName(argv), " "); got != strings.Join(argv, " ") {
		t.Fatalf("changed: %s", got)
	}
}

// The name kept is not rewritten with the addresses: the certificate names
// the Service, not the loopback address the executor dials (found by make
// samples: mysql-replica-tls13's session check refused 127.77.0.67).
func TestRewriteArgsKeepsTheTLSName(t *testing.T) {
	argv := []string{"dbperf-runner", "exec", "--server-address", "r-mysql.perf.svc:3306", "--server-tls",
		"--session-check", "r-mysql.perf.svc:3306", "--session-tls", "--", "tool", "r-mysql.perf.svc"}
	toLoopback := func(s string) (string, error) { return strings.ReplaceAll(s, "r-mysql.perf.svc", "127.77.0.67"), nil }
	got, err := rewriteArgs(argv, toLoopback)
	if err != nil {
		t.Fatal(err)
	}
	want := "dbperf-runner exec --server-address 127.77.0.67:3306 --server-tls-name r-mysql.perf.svc --server-tls " +
		"--session-check 127.77.0.67:3306 --session-tls-name r-mysql.perf.svc --session-tls -- tool 127.77.0.67"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}
