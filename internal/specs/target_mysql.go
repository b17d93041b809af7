package specs

import (
	corev1 "k8s.io/api/core/v1"

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
	return s
}
