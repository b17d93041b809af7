package targets

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/certs"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The MySQL target's TLS, for real: a MySQL-compatible server (Debian's
// MariaDB) started with the TLS arguments of the target's StatefulSet and
// the certificates the operator issues accepts a client holding the issued
// client certificate and verifying the server's name, reports the
// negotiated cipher (what HammerDB prints as Ssl_cipher), and refuses
// clear text and clients without a certificate.
func TestMySQLTargetTLSWithARealServer(t *testing.T) {
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "perf", UID: "u"}, Spec: benchv1.BenchmarkRunSpec{
		Target: benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{TLS: &benchv1.ServerTLS{Enabled: true, RequireClientCertificates: true}}}}}
	s := specs.MySQLServer(run)
	// The test connects by a name the certificate must carry, as load
	// generators connect by the Service name.
	names := append(ServerNames(s), "localhost")
	server, client, err := certs.ServerSecrets(run.Name, names, "root", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	serverDir, clientDir := testutil.WriteTLSDirs(t, "dbperf-mariadb-", server, client)
	var args []string
	for _, a := range s.Args {
		args = append(args, strings.ReplaceAll(a, specs.MySQLTLSDir, serverDir))
	}
	if !strings.Contains(strings.Join(args, " "), "--require-secure-transport=ON") {
		t.Fatalf("the target does not require TLS: %v", s.Args)
	}
	db := testutil.StartMariaDB(t, filepath.Dir(serverDir), args...)
	// As the mysql image's init would, for two-way TLS: the user needs a certificate.
	if out, err := db.Client("--socket="+db.Socket, "-e", "CREATE USER 'bench'@'%' IDENTIFIED BY 'pw' REQUIRE X509; GRANT ALL ON *.* TO 'bench'@'%';"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tcp := []string{"--protocol=TCP", "--host=localhost", "--port=" + strconv.Itoa(db.Port), "--user=bench", "--password=pw", "-N", "-B"}
	withCert := append(append([]string{}, tcp...), "--ssl-ca="+clientDir+"/ca.crt", "--ssl-cert="+clientDir+"/tls.crt",
		"--ssl-key="+clientDir+"/tls.key", "--ssl-verify-server-cert", "-e", "SHOW SESSION STATUS LIKE 'Ssl_cipher'")
	out, err := db.Client(withCert...)
	if err != nil {
		t.Fatalf("a verified client with the issued certificate was refused: %v\n%s", err, out)
	}
	if f := strings.Fields(out); len(f) != 2 || f[0] != "Ssl_cipher" || f[1] == "" {
		t.Fatalf("no cipher negotiated: %q", out)
	}
	if out, err := db.Client(append(append([]string{}, tcp...), "--skip-ssl", "-e", "SELECT 1")...); err == nil {
		t.Errorf("clear text was accepted: %s", out)
	}
	if out, err := db.Client(append(append([]string{}, tcp...), "--ssl-ca="+clientDir+"/ca.crt", "-e", "SELECT 1")...); err == nil {
		t.Errorf("a client without a certificate was accepted: %s", out)
	}
}
