package certs

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"testing"
	"time"
)

// The issued server certificate verifies for its names against the CA, and
// a real TLS handshake with client authentication succeeds on 127.0.0.1.
func TestIssuedCertificatesHandshake(t *testing.T) {
	b, err := Issue("bench", []string{"bench-mysql.perf.svc", "localhost"}, "root", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.CA.Cert) {
		t.Fatal("CA does not parse")
	}
	server, err := tls.X509KeyPair(b.Server.Cert, b.Server.Key)
	if err != nil {
		t.Fatal(err)
	}
	client, err := tls.X509KeyPair(b.Client.Cert, b.Client.Key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{server}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err.Error()
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if err := tc.Handshake(); err != nil {
			done <- err.Error()
			return
		}
		done <- tc.ConnectionState().PeerCertificates[0].Subject.CommonName
		_, _ = io.WriteString(c, "ok")
	}()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(),
		&tls.Config{RootCAs: pool, ServerName: "bench-mysql.perf.svc", Certificates: []tls.Certificate{client}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if cn := <-done; cn != "root" {
		t.Fatalf("server saw %q", cn)
	}
	// A name the certificate does not carry is refused.
	leaf, _ := x509.ParseCertificate(server.Certificate[0])
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "other.svc"}); err == nil {
		t.Error("a wrong server name verified")
	}
}

func TestPassword(t *testing.T) {
	a, b := Password(24), Password(24)
	if len(a) != 24 || a == b {
		t.Errorf("passwords %q %q", a, b)
	}
}
