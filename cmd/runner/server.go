package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/dbstats"
)

// statistics returns the poller exec's flags ask for, or nil when none.
// The credentials come from the run's variables (pod.EnvUsername,
// pod.EnvPassword), never from the command line.
func statistics(s pod.Statistics) (*runner.ServerStatistics, error) {
	if !s.Enabled() {
		return nil, nil
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !slices.Contains(dbstats.Sources(), s.Source) {
		return nil, fmt.Errorf("the server's statistics %q: must be one of %s", s.Source, strings.Join(dbstats.Sources(), ", "))
	}
	cfg := dbstats.Config{Host: s.Address.Host, Port: s.Address.Port, Database: s.Database}.WithEnvCredentials()
	if s.TLS.Enabled {
		t, err := statisticsTLS(s.TLS, s.Address.Host)
		if err != nil {
			return nil, err
		}
		cfg.TLS = t
	}
	return &runner.ServerStatistics{Source: s.Source, Config: cfg, Interval: s.PollInterval}, nil
}

func statisticsTLS(c pod.TLSClient, host string) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if t.ServerName == "" {
		t.ServerName = host
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("the statistics' CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the statistics' CA %s: no PEM certificate in it", c.CAFile)
		}
		t.RootCAs = pool
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("the statistics' client certificate and key go together")
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("the statistics' client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}
