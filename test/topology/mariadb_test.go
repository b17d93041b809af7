package topology

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The test of MySQL-protocol replication, on Debian's MariaDB: a
// primary and a replica started with the arguments of the operator's
// StatefulSets for the mariadb image (the replica's server id as its
// pod's script computes it for ordinal 0), the replica pointed at the
// primary by the statement of its init script; a row written through the
// primary is read on the replica, and the replica's readiness probe passes.
func TestRealMariaDBReplication(t *testing.T) {
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "perf", UID: "6f1c1a2e-0000-4000-8000-000000000002"},
		Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{
			ServerTarget: benchv1.ServerTarget{Image: "mariadb:11.4"}, Replicas: 1}}}}
	primaryServer, replicaServer := specs.MySQLServer(run), specs.MySQLReplicas(run)
	script := replicaServer.Command[2]
	serverIDExpr := `$((2 + ${HOSTNAME##*-}))`
	if !strings.Contains(script, strings.Join(specs.MySQLReplicaArgs(serverIDExpr), " ")) || !strings.Contains(script, "CHANGE MASTER TO") {
		t.Fatalf("the replica's script:\n%s", script)
	}
	// The replica's pod computes its server id from its name.
	out, err := exec.Command("env", "HOSTNAME="+replicaServer.Name+"-0", "sh", "-c", "echo "+serverIDExpr).Output()
	if err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Fatalf("server id of the first replica: %q (%v), want 2", out, err)
	}

	primary := testutil.StartMariaDB(t, dbDir(t), primaryServer.Args...)
	replica := testutil.StartMariaDB(t, dbDir(t), append(replicaServer.Args, specs.MySQLReplicaArgs("2")...)...)
	sql := func(db testutil.MariaDB, statements string) string {
		t.Helper()
		out, err := db.Client("--socket="+db.Socket, "-uroot", "-N", "-B", "-e", statements)
		if err != nil {
			t.Fatalf("%s: %v\n%s", statements, err, out)
		}
		return strings.TrimSpace(out)
	}
	// The pods replicate as root with the generated password; root is
	// the socket's only here, so a user of its own.
	sql(primary, "CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'pw'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'")
	sql(replica, specs.MySQLReplicationSQL(true, "127.0.0.1", primary.Port, "repl", "pw", false))
	sql(primary, "CREATE DATABASE bench; CREATE TABLE bench.t (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO bench.t VALUES (1, 'written')")
	testutil.Eventually(t, 30*time.Second, "the row on the replica", func() error {
		out, err := replica.Client("--socket="+replica.Socket, "-uroot", "-N", "-B", "-e", "SELECT v FROM bench.t WHERE id = 1")
		if err != nil || strings.TrimSpace(out) != "written" {
			return fmt.Errorf("%q (%w)", out, err)
		}
		return nil
	})
	if got := sql(replica, "SELECT @@server_id, @@read_only"); got != "2\t1" {
		t.Errorf("the replica's server_id and read_only: %q, want 2 and 1", got)
	}
	if err := readyProbe(t, replica); err != nil {
		t.Errorf("the replica's readiness probe: %v", err)
	}
	if readyProbe(t, primary) == nil {
		t.Error("the readiness probe passes on the primary, which replicates nothing")
	}
}

// readyProbe runs the replicas' readiness probe against db: its client
// (mysql, as in the image) is a shim that adds db's socket, since Debian's
// client configuration names the system's.
func readyProbe(t *testing.T, db testutil.MariaDB) error {
	bin, err := exec.LookPath("mariadb")
	if err != nil {
		t.Fatal(err)
	}
	shims := t.TempDir()
	shim := "#!/bin/sh\nexec " + bin + " --socket=" + db.Socket + " \"$@\"\n"
	if err := os.WriteFile(shims+"/mysql", []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	probe := exec.Command("sh", "-c", specs.MySQLReplicaReadyScript)
	probe.Env = append(os.Environ(), "PATH="+shims+":"+os.Getenv("PATH"), "MYSQL_ROOT_PASSWORD=")
	if out, err := probe.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// dbDir is a directory mariadbd, running as the mysql user, can reach.
func dbDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "dbperf-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	return dir
}
