package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/dbstats"
)

// serverFlags are exec's flags for polling the target's own statistics.
// The credentials come from the run's variables (DBPERF_TARGET_USERNAME,
// DBPERF_TARGET_PASSWORD), never from the command line.
type serverFlags struct {
	source, address, database, caFile, certFile, keyFile, serverName string
	interval                                                         time.Duration
	tls                                                              bool
}

func (f *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.source, "server-statistics", "", "poll the target's own statistics while the tool runs: "+strings.Join(dbstats.Sources(), ", ")+"; empty: do not")
	fs.StringVar(&f.address, "server-address", "", "HOST:PORT of the target whose statistics are polled")
	fs.StringVar(&f.database, "server-database", "", "database the statistics poller connects to (PostgreSQL), or logs in to (MongoDB: default admin)")
	fs.DurationVar(&f.interval, "server-poll-interval", dbstats.DefaultInterval, "time between polls of the server's statistics")
	fs.BoolVar(&f.tls, "server-tls", false, "connect to the server over TLS")
	fs.StringVar(&f.caFile, "server-tls-ca", "", "CA bundle that verifies the server's certificate (empty: the system's)")
	fs.StringVar(&f.certFile, "server-tls-cert", "", "client certificate for two-way TLS")
	fs.StringVar(&f.keyFile, "server-tls-key", "", "client key for two-way TLS")
	fs.StringVar(&f.serverName, "server-tls-name", "", "name the server's certificate must carry (default: the host)")
}

// statistics returns what the flags ask for, or nil when nothing.
func (f *serverFlags) statistics() (*runner.ServerStatistics, error) {
	if f.source == "" {
		return nil, nil
	}
	host, portText, err := net.SplitHostPort(f.address)
	if err != nil {
		return nil, fmt.Errorf("--server-address %q: %w", f.address, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("--server-address %q: the port must be a number between 1 and 65535", f.address)
	}
	if f.interval < 100*time.Millisecond {
		return nil, fmt.Errorf("--server-poll-interval %s: must be at least 100ms", f.interval)
	}
	if !slices.Contains(dbstats.Sources(), f.source) {
		return nil, fmt.Errorf("--server-statistics %q: must be one of %s", f.source, strings.Join(dbstats.Sources(), ", "))
	}
	cfg := dbstats.Config{Host: host, Port: port, Database: f.database}.WithEnvCredentials()
	if f.tls {
		t, err := f.tlsConfig(host)
		if err != nil {
			return nil, err
		}
		cfg.TLS = t
	}
	return &runner.ServerStatistics{Source: f.source, Config: cfg, Interval: f.interval}, nil
}

func (f *serverFlags) tlsConfig(host string) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.serverName}
	if t.ServerName == "" {
		t.ServerName = host
	}
	if f.caFile != "" {
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return nil, fmt.Errorf("--server-tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--server-tls-ca %s: no PEM certificate in it", f.caFile)
		}
		t.RootCAs = pool
	}
	if (f.certFile == "") != (f.keyFile == "") {
		return nil, errors.New("--server-tls-cert and --server-tls-key go together")
	}
	if f.certFile != "" {
		cert, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--server-tls-cert: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}
