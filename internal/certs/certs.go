// Package certs issues the certificates of operator-owned TLS servers: a
// CA per run, a server certificate for the Service's names, and, for two-way
// TLS, a client certificate. Keys are ECDSA P-256 and never leave the
// Secrets they are written to.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// Validity of the issued certificates: a run never lasts this long.
const Validity = 30 * 24 * time.Hour

// Pair is a PEM certificate and its PEM private key.
type Pair struct {
	Cert, Key []byte
}

// Bundle is a CA with the certificates it signed.
type Bundle struct {
	CA     Pair
	Server Pair
	Client Pair
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

// Issue creates a CA named after the run, a server certificate for the
// given DNS names, and a client certificate for clientName (when not empty).
func Issue(runName string, dnsNames []string, clientName string, now time.Time) (*Bundle, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "dbperf " + runName + " CA", Organization: []string{"dbperf-operator"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(Validity),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	caCert, _ := x509.ParseCertificate(der)
	b := &Bundle{caCert: caCert, caKey: caKey}
	if b.CA, err = encode(der, caKey); err != nil {
		return nil, err
	}
	if b.Server, err = b.leaf(dnsNames[0], dnsNames, x509.ExtKeyUsageServerAuth, now); err != nil {
		return nil, fmt.Errorf("server certificate: %w", err)
	}
	if clientName != "" {
		if b.Client, err = b.leaf(clientName, nil, x509.ExtKeyUsageClientAuth, now); err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
	}
	return b, nil
}

func (b *Bundle) leaf(cn string, dns []string, usage x509.ExtKeyUsage, now time.Time) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: cn, Organization: []string{"dbperf-operator"}}, DNSNames: dns,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(Validity),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, b.caCert, &key.PublicKey, b.caKey)
	if err != nil {
		return Pair{}, err
	}
	return encode(der, key)
}

func encode(der []byte, key *ecdsa.PrivateKey) (Pair, error) {
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, err
	}
	return Pair{
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}),
	}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return n
}

// Password returns a random password of n letters and digits.
func Password(n int) string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	out := make([]byte, n)
	for i := range out {
		k, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		out[i] = alphabet[k.Int64()]
	}
	return string(out)
}

// ServerSecrets issues what a TLS server target needs, as Secret data: the
// server's ca.crt, tls.crt and tls.key, and — when clientName is not empty —
// the client's ca.crt, tls.crt and tls.key for two-way TLS.
func ServerSecrets(runName string, dnsNames []string, clientName string, now time.Time) (server, client map[string][]byte, err error) {
	b, err := Issue(runName, dnsNames, clientName, now)
	if err != nil {
		return nil, nil, err
	}
	server = map[string][]byte{"ca.crt": b.CA.Cert, "tls.crt": b.Server.Cert, "tls.key": b.Server.Key}
	if clientName != "" {
		client = map[string][]byte{"ca.crt": b.CA.Cert, "tls.crt": b.Client.Cert, "tls.key": b.Client.Key}
	}
	return server, client, nil
}
