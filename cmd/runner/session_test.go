package main

import (
	"cmp"
	"crypto/tls"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/certs"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/runner/sessioncheck"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/tlsciphers"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// tlsMariaDB is Debian's MariaDB serving TLS with the certificates the
// operator issues, started with the MySQL target's TLS file arguments and
// the arguments specs.MySQLSessionArgs builds from target (its TLS
// version, cipher and session variables); the user bench (password pw)
// must connect over TLS. clientDir holds the client's ca.crt.
func tlsMariaDB(t *testing.T, target *benchv1.MySQLTarget) (db testutil.MariaDB, clientDir string) {
	t.Helper()
	server, client, err := certs.ServerSecrets("session", []string{"localhost"}, "bench", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	serverDir, clientDir := testutil.WriteTLSDirs(t, "dbperf-mariadb-session-", server, client)
	args := append([]string{"--require-secure-transport=ON", "--ssl-ca=" + serverDir + "/ca.crt",
		"--ssl-cert=" + serverDir + "/tls.crt", "--ssl-key=" + serverDir + "/tls.key"}, specs.MySQLSessionArgs(target)...)
	t.Logf("server arguments from MySQLSessionArgs: %v", specs.MySQLSessionArgs(target))
	db = testutil.StartMariaDB(t, filepath.Dir(serverDir), args...)
	if out, err := db.Client("--socket="+db.Socket, "-e", "CREATE USER 'bench'@'%' IDENTIFIED BY 'pw' REQUIRE SSL; GRANT ALL ON *.* TO 'bench'@'%';"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return db, clientDir
}

// execWithSessionCheck runs `dbperf-runner exec` with the arguments the
// operator's Job gives it for a measurement of a tool speaking MySQL's
// protocol to ep (the session check's flags included), the client's TLS
// files where the pod mounts them in clientDir; the tool is a trivial one
// (cat of a real pgbench output), so that only the check can judge.
func execWithSessionCheck(t *testing.T, ep pod.Endpoint, clientDir string) (int, string, *results.Result) {
	t.Helper()
	fixture := filepath.Join(testutil.FixturesDir(t, "pgbench"), "pg14plus-tpcb-scale50-haproxy.txt")
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: "perf", UID: "u"}}
	job := specs.Job(specs.JobParams{Run: run, Name: "m", Role: benchv1.RoleLoadgen, Workload: "pgbench",
		Invocation: pod.Invocation{Command: []string{"cat", fixture}}, Endpoint: ep, Protocol: pod.ProtocolMySQL})
	c := job.Spec.Template.Spec.Containers[0]
	var env []string
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			env = append(env, e.Name)
		}
	}
	if !slices.Contains(env, pod.EnvUsername) || !slices.Contains(env, pod.EnvPassword) {
		t.Fatalf("the Job gives the check no credentials: %v", c.Env)
	}
	args := slices.Clone(c.Args[1:]) // after "exec"
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, pod.TLSDir, clientDir)
		if a == "--max-cpu-percent" {
			args[i+1] = "0" // cat's CPU over its few milliseconds says nothing
		}
	}
	return execRunner(t, args...)
}

// endpoint is what the MySQL target's connect gives load generators for
// target (controllers/targets/mysql.go), reached at db by the name its
// certificate carries.
func endpoint(db testutil.MariaDB, target *benchv1.MySQLTarget) pod.Endpoint {
	ep := pod.Endpoint{Host: "127.0.0.1", Port: int32(db.Port), ServerName: "localhost", TLS: true, CASecret: "ca",
		Username: secretKey("username"), Password: secretKey("password"),
		TLSVersion: string(target.TLS.Version), TLSCipher: target.TLS.Cipher, SessionVariables: map[string]string{}}
	for k, v := range target.SessionVariables {
		ep.SessionVariables[k] = string(v)
	}
	return ep
}

// TestExecSessionCheckPassesWhatTheServerNegotiates: MariaDB with TLS 1.3
// offering only TLS_AES_128_GCM_SHA256 and autocommit ON by default; the
// measurement asks for both and is Succeeded, with what the session had
// recorded in its parameters.
func TestExecSessionCheckPassesWhatTheServerNegotiates(t *testing.T) {
	target := &benchv1.MySQLTarget{ServerTarget: benchv1.ServerTarget{Image: "mariadb:10.11"},
		TLS:              &benchv1.ServerTLS{Enabled: true, Version: benchv1.TLSv13, Cipher: "TLS_AES_128_GCM_SHA256"},
		SessionVariables: map[string]benchv1.SessionValue{"autocommit": "ON"}}
	db, clientDir := tlsMariaDB(t, target)
	t.Setenv(pod.EnvUsername, "bench")
	t.Setenv(pod.EnvPassword, "pw")
	code, out, r := execWithSessionCheck(t, endpoint(db, target), clientDir)
	if code != runner.ExitValid {
		t.Fatalf("exit %d: %v %v\n%s", code, r.Reasons, r.Warnings, out)
	}
	want := map[string]string{sessioncheck.ParamTLSVersion: "TLSv1.3", sessioncheck.ParamTLSCipher: "TLS_AES_128_GCM_SHA256",
		sessioncheck.ParamVariablePrefix + "autocommit": "1"}
	for k, v := range want {
		if r.Parameters[k] != v {
			t.Errorf("parameter %s = %q, want %q (all: %v)", k, r.Parameters[k], v, r.Parameters)
		}
	}

	// The same server, a check that cannot log in: Invalid with the
	// error, and neither credential printed.
	t.Setenv(pod.EnvUsername, "bench-user-x")
	t.Setenv(pod.EnvPassword, "Wrong-Pass-123")
	code, out, r = execWithSessionCheck(t, endpoint(db, target), clientDir)
	reasons := strings.Join(r.Reasons, "\n")
	t.Logf("wrong credentials: %s", reasons)
	if code != runner.ExitInvalid || !strings.Contains(reasons, "the session check could not confirm") || !strings.Contains(reasons, "Access denied") {
		t.Fatalf("exit %d: %v\n%s", code, r.Reasons, out)
	}
	if strings.Contains(out, "Wrong-Pass-123") || strings.Contains(out, "bench-user-x") {
		t.Errorf("a credential was printed:\n%s", out)
	}
	if _, ok := r.Get(results.Key{Name: "transactionsPerSecond"}); !ok {
		t.Errorf("an Invalid measurement keeps its numbers: %+v", r.Metrics)
	}
}

// TestExecSessionCheckMismatchIsInvalid: MariaDB forced to
// TLS_AES_256_GCM_SHA384 and autocommit OFF by default; a measurement
// asking for TLS_AES_128_GCM_SHA256 (which Go cannot impose under TLS
// 1.3: the server chose) and autocommit ON is Invalid, each reason naming
// what was negotiated and what was asked for.
func TestExecSessionCheckMismatchIsInvalid(t *testing.T) {
	target := &benchv1.MySQLTarget{ServerTarget: benchv1.ServerTarget{Image: "mariadb:10.11"},
		TLS:              &benchv1.ServerTLS{Enabled: true, Version: benchv1.TLSv13, Cipher: "TLS_AES_256_GCM_SHA384"},
		SessionVariables: map[string]benchv1.SessionValue{"autocommit": "OFF"}}
	db, clientDir := tlsMariaDB(t, target)
	t.Setenv(pod.EnvUsername, "bench")
	t.Setenv(pod.EnvPassword, "pw")
	ep := endpoint(db, target)
	ep.TLSCipher, ep.SessionVariables = "TLS_AES_128_GCM_SHA256", map[string]string{"autocommit": "ON"}
	code, out, r := execWithSessionCheck(t, ep, clientDir)
	if code != runner.ExitInvalid {
		t.Fatalf("exit %d: %v\n%s", code, r.Reasons, out)
	}
	t.Logf("reasons: %q", r.Reasons)
	for _, want := range []string{"TLS cipher negotiated TLS_AES_256_GCM_SHA384, asked for TLS_AES_128_GCM_SHA256",
		"session variable autocommit is 0, asked for ON"} {
		if !slices.Contains(r.Reasons, want) {
			t.Errorf("no reason %q in %q", want, r.Reasons)
		}
	}
	if len(r.Reasons) != 2 || r.Parameters[sessioncheck.ParamTLSVersion] != "TLSv1.3" {
		t.Errorf("reasons %q, parameters %v", r.Reasons, r.Parameters)
	}
}

func secretKey(key string) *corev1.SecretKeySelector {
	return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "credentials"}, Key: key}
}

// TestSessionFlagsRoundTrip: the flags the operator's Job gives the
// runner for an Endpoint come back, in the runner, as a check of that
// Endpoint's TLS request and session variables.
func TestSessionFlagsRoundTrip(t *testing.T) {
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: "perf", UID: "u"}}
	for name, ep := range map[string]pod.Endpoint{
		"TLS 1.2 by an OpenSSL name": {Host: "db.perf.svc", Port: 3307, TLS: true, ServerName: "db", TLSVersion: "TLSv1.2",
			TLSCipher: "ECDHE-ECDSA-AES128-GCM-SHA256", SessionVariables: map[string]string{"autocommit": "ON"}},
		"TLS 1.3, no CA":             {Host: "10.0.0.7", Port: 3306, TLS: true, TLSVersion: "TLSv1.3", TLSCipher: "TLS_AES_128_GCM_SHA256"},
		"clear text, variables only": {Host: "db", Port: 3306, SessionVariables: map[string]string{"autocommit": "OFF", "sql_mode": "ANSI"}},
	} {
		t.Run(name, func(t *testing.T) {
			job := specs.Job(specs.JobParams{Run: run, Name: "m", Role: benchv1.RoleLoadgen, Workload: "pgbench",
				Invocation: pod.Invocation{Command: []string{"true"}}, Endpoint: ep, Protocol: pod.ProtocolMySQL})
			args := job.Spec.Template.Spec.Containers[0].Args
			exec, err := pod.ParseExec(args[1:], io.Discard) // after "exec"
			if err != nil {
				t.Fatal(err)
			}
			session := exec.Session.Args() // the session check's flags among the runner's
			got, err := sessionCheck(exec.Session)
			if err != nil {
				t.Fatal(err)
			}
			c := got.(sessioncheck.Check)
			if c.Host != ep.Host || c.Port != int(ep.Port) || c.TLSVersion != ep.TLSVersion || c.TLSCipher != ep.TLSCipher ||
				!maps.Equal(c.Variables, ep.SessionVariables) || (c.TLS != nil) != ep.TLS {
				t.Fatalf("the check %+v is not the endpoint's %+v (flags %q)", c, ep, session)
			}
			if !ep.TLS {
				return
			}
			if want := cmp.Or(ep.ServerName, ep.Host); c.TLS.ServerName != want || !c.TLS.InsecureSkipVerify {
				t.Errorf("server name %q (want %q), unverified %v", c.TLS.ServerName, want, c.TLS.InsecureSkipVerify)
			}
			switch ep.TLSVersion {
			case "TLSv1.2":
				id, _ := tlsciphers.GoID(ep.TLSCipher)
				if c.TLS.MaxVersion != tls.VersionTLS12 || !slices.Equal(c.TLS.CipherSuites, []uint16{id}) {
					t.Errorf("TLS 1.2: max version %#x, suites %v, want only %#04x", c.TLS.MaxVersion, c.TLS.CipherSuites, id)
				}
			case "TLSv1.3":
				if c.TLS.MinVersion != tls.VersionTLS13 || c.TLS.MaxVersion != tls.VersionTLS13 || len(c.TLS.CipherSuites) != 0 {
					t.Errorf("TLS 1.3: versions %#x-%#x, suites %v", c.TLS.MinVersion, c.TLS.MaxVersion, c.TLS.CipherSuites)
				}
			}
		})
	}
}
