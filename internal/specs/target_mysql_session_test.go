package specs

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

func TestMySQLSessionArgs(t *testing.T) {
	tls := func(version benchv1.TLSVersion, cipher string) *benchv1.ServerTLS {
		return &benchv1.ServerTLS{Enabled: true, Version: version, Cipher: cipher}
	}
	for name, tc := range map[string]struct {
		target benchv1.MySQLTarget
		want   []string
	}{
		"nothing asked": {benchv1.MySQLTarget{TLS: &benchv1.ServerTLS{Enabled: true}}, nil},
		"MySQL, a TLS 1.3 suite": {benchv1.MySQLTarget{TLS: tls(benchv1.TLSv13, "TLS_AES_128_GCM_SHA256")},
			[]string{"--tls-version=TLSv1.3", "--tls-ciphersuites=TLS_AES_128_GCM_SHA256"}},
		"MariaDB, a TLS 1.3 suite (it has no --tls-ciphersuites)": {
			benchv1.MySQLTarget{ServerTarget: benchv1.ServerTarget{Image: "docker.io/library/mariadb:11.4"}, TLS: tls(benchv1.TLSv13, "TLS_AES_128_GCM_SHA256")},
			[]string{"--tls-version=TLSv1.3", "--ssl-cipher=TLS_AES_128_GCM_SHA256"}},
		"a TLS 1.2 suite by its IANA name, the version implied": {benchv1.MySQLTarget{TLS: tls("", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")},
			[]string{"--tls-version=TLSv1.2", "--ssl-cipher=ECDHE-RSA-AES128-GCM-SHA256"}},
		"a TLS 1.3 suite, the version implied": {benchv1.MySQLTarget{TLS: tls("", "TLS_AES_256_GCM_SHA384")},
			[]string{"--tls-version=TLSv1.3", "--tls-ciphersuites=TLS_AES_256_GCM_SHA384"}},
		"a version only":                     {benchv1.MySQLTarget{TLS: tls(benchv1.TLSv12, "")}, []string{"--tls-version=TLSv1.2"}},
		"TLS off: its settings are not used": {benchv1.MySQLTarget{TLS: &benchv1.ServerTLS{Version: benchv1.TLSv13, Cipher: "TLS_AES_128_GCM_SHA256"}}, nil},
		"session variables, in order, as options": {benchv1.MySQLTarget{SessionVariables: map[string]benchv1.SessionValue{"autocommit": "ON", "transaction_isolation": "READ-COMMITTED"}},
			[]string{"--autocommit=ON", "--transaction-isolation=READ-COMMITTED"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MySQLSessionArgs(&tc.target)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "n"}, Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{
		MySQL: &benchv1.MySQLTarget{TLS: tls(benchv1.TLSv13, "TLS_AES_128_GCM_SHA256"), SessionVariables: map[string]benchv1.SessionValue{"autocommit": "ON"}}}}}
	if args := MySQLServer(run).Args; !slices.Contains(args, "--tls-ciphersuites=TLS_AES_128_GCM_SHA256") || !slices.Contains(args, "--autocommit=ON") {
		t.Errorf("the server does not get the session arguments: %v", args)
	}
}

// The session check's flags come from the Endpoint, for a measurement of
// a tool speaking MySQL's protocol only, with the credentials in the
// environment and the password redacted.
func TestSessionCheckArgs(t *testing.T) {
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "n"}}
	secret := func(key string) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: key}
	}
	ep := pod.Endpoint{Host: "db", Port: 3306, TLS: true, CASecret: "ca", ClientCertSecret: "client", ServerName: "db.n.svc",
		Username: secret("username"), Password: secret("password"),
		TLSVersion: "TLSv1.3", TLSCipher: "TLS_AES_128_GCM_SHA256", SessionVariables: map[string]string{"sql_mode": "ANSI", "autocommit": "ON"}}
	p := JobParams{Run: run, Role: benchv1.RoleLoadgen, Endpoint: ep, Protocol: pod.ProtocolMySQL}
	want := []string{"--session-check", "db:3306", "--session-protocol", "mysql", "--session-tls", "--session-tls-ca", pod.CAFile,
		"--session-tls-cert", pod.ClientCertFile, "--session-tls-key", pod.ClientKeyFile, "--session-tls-name", "db.n.svc",
		"--session-tls-version", "TLSv1.3", "--session-tls-cipher", "TLS_AES_128_GCM_SHA256",
		"--session-variable", "autocommit=ON", "--session-variable", "sql_mode=ANSI"}
	if diff := cmp.Diff(want, sessionCheck(p).Args()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	args := execCommand(p).Args()
	if i := slices.Index(args, "--redact-env"); i < 0 || args[i+1] != pod.EnvPassword {
		t.Errorf("the password is not redacted: %v", args)
	}
	env := map[string]bool{}
	for _, e := range containerEnv(p) {
		env[e.Name] = e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
	}
	if !env[pod.EnvUsername] || !env[pod.EnvPassword] {
		t.Errorf("the check's credentials are not in the environment from the Secret: %v", containerEnv(p))
	}
	for name, q := range map[string]JobParams{
		"another protocol": {Run: run, Role: benchv1.RoleLoadgen, Endpoint: ep, Protocol: pod.ProtocolPostgres},
		"a prepare step":   {Run: run, Role: benchv1.RolePrepare, Endpoint: ep, Protocol: pod.ProtocolMySQL},
		"nothing asked":    {Run: run, Role: benchv1.RoleLoadgen, Endpoint: pod.Endpoint{Host: "db", Port: 3306, TLS: true}, Protocol: pod.ProtocolMySQL},
	} {
		if got := sessionCheck(q).Args(); got != nil {
			t.Errorf("%s: %v", name, got)
		}
	}
}
