package executor

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// serveLogs answers the API server's container-log requests (kubectl logs,
// the operator's log reader) on the nodes' kubelet endpoint, over TLS with a
// throwaway certificate (the API server does not verify kubelets unless told
// to). /containerLogs/ (every pod here has one container), the Summary
// API's /stats/summary (stats.go) and cAdvisor's /metrics/cadvisor
// (cadvisor.go) are served. Prometheus scrapes the last over this same
// HTTPS endpoint without verifying it, as a cluster's kubelet job does
// (kube-prometheus' insecureSkipVerify): one endpoint, as on a real node.
func (e *Executor) serveLogs(addr string) (*http.Server, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats/summary", e.serveSummary)
	mux.Handle("GET /metrics/cadvisor", e.cadvisorHandler())
	mux.HandleFunc("/containerLogs/{ns}/{pod}/{container}", func(w http.ResponseWriter, r *http.Request) {
		ns, name := r.PathValue("ns"), r.PathValue("pod")
		var path string
		e.mu.Lock()
		for _, run := range e.pods {
			if strings.HasPrefix(strings.TrimPrefix(run.dir, e.o.WorkDir+"/"), ns+"_"+name+"_") {
				path = run.logPath
			}
		}
		e.mu.Unlock()
		if path == "" {
			http.Error(w, "the test executor did not run pod "+ns+"/"+name+" (kwok simulates it: it has no log)", http.StatusNotFound)
			return
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if n, err := strconv.Atoi(r.URL.Query().Get("tailLines")); err == nil && n >= 0 {
			raw = tailLines(raw, n)
		}
		if n, err := strconv.Atoi(r.URL.Query().Get("limitBytes")); err == nil && n >= 0 && n < len(raw) {
			raw = raw[:n]
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(raw)
	})
	return ServeKubeletTLS(addr, mux)
}

// ServeKubeletTLS serves handler on a nodes' kubelet endpoint (addr, the
// nodes' address and kubelet port) over TLS with a throwaway certificate,
// as the API server's node proxy expects a kubelet to. The test executor
// serves its pods' logs and statistics with it; a test's own stand-in
// kubelet (the scale benchmark's) can serve its pods' logs the same way.
func ServeKubeletTLS(addr string, handler http.Handler) (*http.Server, error) {
	host, _, _ := net.SplitHostPort(addr)
	cert, err := selfSigned(host)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	return srv, nil
}

func tailLines(raw []byte, n int) []byte {
	if n == 0 {
		return nil
	}
	end := len(raw)
	if end > 0 && raw[end-1] == '\n' {
		end--
	}
	count := 0
	for i := end - 1; i >= 0; i-- {
		if raw[i] == '\n' {
			count++
			if count == n {
				return raw[i+1:]
			}
		}
	}
	return raw
}

// selfSigned makes the endpoint's throwaway certificate, for 127.0.0.1 and
// the address it listens on.
func selfSigned(host string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dbperf-executor"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: ips(host), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func ips(host string) []net.IP {
	out := []net.IP{net.ParseIP("127.0.0.1")}
	if ip := net.ParseIP(host); ip != nil && !ip.Equal(out[0]) {
		out = append(out, ip)
	}
	return out
}
