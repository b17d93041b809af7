package pod

// TLSClient is the TLS of one connection from a workload pod to the
// target, with the files the pod mounts (Endpoint.ClientTLS).
type TLSClient struct {
	// Enabled encrypts the connection; the rest is read only then.
	Enabled bool
	// CAFile is the CA bundle that verifies the server's certificate.
	CAFile string
	// CertFile and KeyFile are the client certificate of two-way TLS.
	CertFile, KeyFile string
	// ServerName is the name the server's certificate must carry; empty:
	// the host connected to.
	ServerName string
}

// tlsFlagNames spell a TLSClient's flags on one command line
// (flagnames.go): each connection of the pod has its own.
type tlsFlagNames struct{ enabled, ca, cert, key, serverName string }

func (c *TLSClient) bind(t *flagTable, n tlsFlagNames) {
	t.boolean(&c.Enabled, n.enabled, "connect over TLS")
	t.str(&c.CAFile, n.ca, "", "CA bundle that verifies the server's certificate")
	t.str(&c.CertFile, n.cert, "", "client certificate of two-way TLS")
	t.str(&c.KeyFile, n.key, "", "client key of two-way TLS")
	t.str(&c.ServerName, n.serverName, "", "name the server's certificate must carry (default: the host)")
}
