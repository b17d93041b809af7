package pod

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// Endpoint is how a load generator reaches the target. Credentials are
// references to Secret keys, never values.
type Endpoint struct {
	Host     string
	Port     int32
	Database string
	Username *corev1.SecretKeySelector
	Password *corev1.SecretKeySelector
	TLS      bool
	// CASecret names a Secret with key ca.crt; mounted at CAFile.
	CASecret   string
	ServerName string
	// ClientCertSecret names a Secret with tls.crt and tls.key, the client
	// certificate of two-way TLS; mounted in TLSDir.
	ClientCertSecret string
	// Superuser and SuperuserPassword, when the target has them, are an
	// administrator's credentials for tools that create their own schema
	// and user (HammerDB on PostgreSQL).
	Superuser, SuperuserPassword *corev1.SecretKeySelector
	// Cluster: the target is a sharded cluster the client must follow
	// (Valkey Cluster: memtier --cluster-mode); Host and Port are one of
	// its members.
	Cluster bool
	// ReadHost is a Service of the target's replicas, for tools that can
	// send reads to replicas; empty when it has none.
	ReadHost string
	// TLSVersion and TLSCipher are what the client must ask for (MySQL
	// protocol); each measurement checks what was negotiated.
	TLSVersion, TLSCipher string
	// SessionVariables a session of the workload's user must have
	// (MySQL protocol), checked at each measurement.
	SessionVariables map[string]string
}

// Address is the endpoint's host and port.
func (ep Endpoint) Address() Address {
	return Address{Host: ep.Host, Port: int(ep.Port)}
}

// ClientTLS is the TLS of a connection to the endpoint from its pod, with
// the files the pod mounts; disabled when the endpoint has none.
func (ep Endpoint) ClientTLS() TLSClient {
	if !ep.TLS {
		return TLSClient{}
	}
	c := TLSClient{Enabled: true, ServerName: ep.ServerName}
	if ep.CASecret != "" {
		c.CAFile = CAFile
	}
	if ep.ClientCertSecret != "" {
		c.CertFile, c.KeyFile = ClientCertFile, ClientKeyFile
	}
	return c
}

// CredentialEnv returns the variables that carry the endpoint's credentials
// from their Secret, under the given names (empty skips one).
func (ep Endpoint) CredentialEnv(userVar, passVar string) []corev1.EnvVar {
	var env []corev1.EnvVar
	if ep.Username != nil && userVar != "" {
		env = append(env, corev1.EnvVar{Name: userVar, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ep.Username}})
	}
	if ep.Password != nil && passVar != "" {
		env = append(env, corev1.EnvVar{Name: passVar, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ep.Password}})
	}
	return env
}

// AddressEnv is where the target is, as a tool of its own (a custom tool,
// a prepare command) reads it: DBPERF_TARGET_HOST, _PORT and, when there
// is one, _DATABASE.
func (ep Endpoint) AddressEnv(database string) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: EnvHost, Value: ep.Host},
		{Name: EnvPort, Value: strconv.Itoa(int(ep.Port))},
	}
	if database != "" {
		env = append(env, corev1.EnvVar{Name: EnvDatabase, Value: database})
	}
	return env
}

// TLSEnv is how the target asks such a tool to connect: DBPERF_TARGET_TLS,
// and over TLS the files of ClientTLS and the server's name.
func (ep Endpoint) TLSEnv() []corev1.EnvVar {
	env := []corev1.EnvVar{{Name: EnvTLS, Value: strconv.FormatBool(ep.TLS)}}
	c := ep.ClientTLS()
	if c.CAFile != "" {
		env = append(env, corev1.EnvVar{Name: EnvCAFile, Value: c.CAFile})
	}
	if c.CertFile != "" {
		env = append(env, corev1.EnvVar{Name: EnvCertFile, Value: c.CertFile}, corev1.EnvVar{Name: EnvKeyFile, Value: c.KeyFile})
	}
	if c.ServerName != "" {
		env = append(env, corev1.EnvVar{Name: EnvServerName, Value: c.ServerName})
	}
	return env
}
