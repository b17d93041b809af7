package specs

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The mysql target kind: the official image, used when the spec names none.
const (
	DefaultMySQLImage = "mysql:8.4"
	MySQLPort         = 3306
	// MySQLTLSDir is where the server's certificate is mounted.
	MySQLTLSDir = "/etc/mysql/tls"
	// MySQLKind is the kind as spec.target spells it; it names the generated Secrets.
	MySQLKind = "mysql"
)

// The kind's default images, for the registry remap and the allow-list
// (images.go).
func init() {
	addDefaultImage("spec.target.mysql.image", DefaultMySQLImage, func(t *benchv1.TargetSpec) *string {
		if t.MySQL == nil {
			return nil
		}
		return &t.MySQL.Image
	})
}

// MySQLServer is the official MySQL image with the root password from the
// generated Secret, and TLS required when the spec asks for it.
func MySQLServer(run *benchv1.BenchmarkRun) Server {
	t := run.Spec.Target.MySQL
	creds := CredentialsSecretName(run, MySQLKind)
	s := Server{Run: run, Name: ServerName(run, MySQLKind), Container: "mysql", User: "root", Image: orDefault(t.Image, DefaultMySQLImage),
		Port: MySQLPort, PortName: "mysql", Replicas: 1, UID: 999, DataPath: "/var/lib/mysql", Storage: t.Storage, Resources: t.Resources,
		ExtraVolumes: []string{"/var/run/mysqld", "/tmp"},
		Env: []corev1.EnvVar{secretEnv("MYSQL_ROOT_PASSWORD", creds, "password"),
			{Name: "MYSQL_DATABASE", Value: orDefault(t.Database, "bench")}, {Name: "MYSQL_ROOT_HOST", Value: "%"}},
		Args: append([]string{}, t.Args...),
	}
	if t.TLS != nil && t.TLS.Enabled {
		secret := TLSSecretName(run, MySQLKind)
		if t.TLS.CertificateSecretRef != nil {
			secret = t.TLS.CertificateSecretRef.Name
		}
		s.Secrets = []SecretMount{{Volume: "tls", Secret: secret, Path: MySQLTLSDir}}
		s.Args = append([]string{"--require-secure-transport=ON", "--ssl-ca=" + MySQLTLSDir + "/ca.crt",
			"--ssl-cert=" + MySQLTLSDir + "/tls.crt", "--ssl-key=" + MySQLTLSDir + "/tls.key"}, s.Args...)
	}
	s.Args = append(s.Args, MySQLSessionArgs(t)...)
	if t.Replicas > 0 { // MySQLReplicas, below
		s.Role, s.Args = benchv1.InstancePrimary, append(MySQLPrimaryArgs(IsMariaDB(s.Image)), s.Args...)
	}
	return s
}

// MySQL replication (spec.target.mysql.replicas): the primary writes a
// binary log with GTIDs, and each replica, a second StatefulSet on
// replicaPlacement, is pointed at it by a script the image's entrypoint
// runs once, when it initialises the data directory. Replicas log in as
// root with the password both read from the one credentials Secret. The
// mariadb image spells replication differently (MariaDB's GTIDs are always
// on; CHANGE MASTER TO); an image whose name holds "mariadb" gets its
// spelling.

// mysqlInitDir is where the official images look for initialisation scripts.
const mysqlInitDir = "/docker-entrypoint-initdb.d"

// IsMariaDB says whether an image is MariaDB's, by its name.
func IsMariaDB(image string) bool { return strings.Contains(strings.ToLower(image), "mariadb") }

// MySQLReplicasName names the replicas' StatefulSet and their Service.
func MySQLReplicasName(run *benchv1.BenchmarkRun) string {
	return ServerName(run, MySQLKind+"-replicas")
}

// MySQLPrimaryArgs are the primary's arguments when it has replicas.
func MySQLPrimaryArgs(mariadb bool) []string {
	if mariadb {
		return []string{"--server-id=1", "--log-bin"}
	}
	return []string{"--server-id=1", "--log-bin", "--gtid-mode=ON", "--enforce-gtid-consistency=ON"}
}

// MySQLReplicaArgs follow the primary's arguments on a replica: its own
// server id and no writes but replication's.
func MySQLReplicaArgs(serverID string) []string {
	return []string{"--server-id=" + serverID, "--read-only=ON"}
}

// MySQLReplicationSQL points a replica at its primary and starts it, by GTID.
// password is written as given (the init script gives a shell expansion).
func MySQLReplicationSQL(mariadb bool, host string, port int, user, password string, tls bool) string {
	if mariadb {
		ssl := ""
		if tls {
			ssl = ", MASTER_SSL=1"
		}
		return fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='%s', MASTER_PORT=%d, MASTER_USER='%s', MASTER_PASSWORD='%s', MASTER_USE_GTID=slave_pos%s;\nSTART SLAVE;\n",
			host, port, user, password, ssl)
	}
	// Without TLS, caching_sha2_password needs the source's public key.
	ssl := ", GET_SOURCE_PUBLIC_KEY=1"
	if tls {
		ssl = ", SOURCE_SSL=1"
	}
	return fmt.Sprintf("CHANGE REPLICATION SOURCE TO SOURCE_HOST='%s', SOURCE_PORT=%d, SOURCE_USER='%s', SOURCE_PASSWORD='%s', SOURCE_AUTO_POSITION=1%s;\nSTART REPLICA;\n",
		host, port, user, password, ssl)
}

// MySQLReplicaReadyScript succeeds when both replication threads run; the
// readiness probe of a replica, so that a ready StatefulSet replicates.
const MySQLReplicaReadyScript = `client=$(command -v mysql || command -v mariadb); ` +
	`status=$(MYSQL_PWD="$MYSQL_ROOT_PASSWORD" "$client" -uroot -e 'SHOW REPLICA STATUS\G') && ` +
	`echo "$status" | grep -Eq '(Replica|Slave)_IO_Running: Yes' && echo "$status" | grep -Eq '(Replica|Slave)_SQL_Running: Yes'`

// MySQLReplicas are the replicas of spec.target.mysql.replicas: the
// primary's server (image, credentials, TLS, arguments) with a server id
// from the pod's ordinal (2 and up), read-only, replicating from the
// primary's Service.
func MySQLReplicas(run *benchv1.BenchmarkRun) Server {
	t := run.Spec.Target.MySQL
	primary := MySQLServer(run)
	s := primary
	mariadb := IsMariaDB(s.Image)
	s.Name, s.Role, s.Replicas = MySQLReplicasName(run), benchv1.InstanceReplica, t.Replicas
	s.Placement = ptr.To(run.Spec.Target.ReplicasPlacement())
	s.ExtraVolumes = append(append([]string{}, primary.ExtraVolumes...), mysqlInitDir)
	entrypoint := "mysqld"
	if mariadb {
		entrypoint = "mariadbd"
	}
	sql := MySQLReplicationSQL(mariadb, primary.Host(), MySQLPort, "root", "$MYSQL_ROOT_PASSWORD", t.TLS != nil && t.TLS.Enabled)
	// The entrypoint sources *.sh scripts, which can then use its
	// docker_process_sql; $HOSTNAME is the pod's name, <statefulset>-<ordinal>.
	script := "cat > " + mysqlInitDir + "/replicate.sh <<'EOF'\ndocker_process_sql <<SQL\n" + sql + "SQL\nEOF\n" +
		`exec docker-entrypoint.sh ` + entrypoint + ` "$@" ` + strings.Join(MySQLReplicaArgs(`$((2 + ${HOSTNAME##*-}))`), " ")
	s.Command = []string{"sh", "-c", script, "replica"}
	s.Readiness = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", MySQLReplicaReadyScript}}},
		PeriodSeconds: 5, FailureThreshold: 3, TimeoutSeconds: 4,
	}
	return s
}
