package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/runner/diagnose"
	"github.com/dbperf-io/dbperf-operator/internal/runner/hoststats"
	"github.com/dbperf-io/dbperf-operator/internal/runner/profile"
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
	cfg := dbstats.Config{Host: s.Address.Host, Port: s.Address.Port, Database: s.Database}.WithEnvCredentials()
	tc, err := s.TLS.Config(s.Address.Host)
	if err != nil {
		return nil, fmt.Errorf("the statistics' TLS: %w", err)
	}
	cfg.TLS = tc
	out := &runner.ServerStatistics{Protocol: s.Protocol, Config: cfg, Interval: s.PollInterval}
	if s.Diagnostics {
		out.Diagnostics = &diagnose.Options{WaitInterval: s.WaitInterval, Plans: s.Plans}
		if s.ProfileHz > 0 {
			out.Diagnostics.Profile = &profile.Options{FrequencyHz: s.ProfileHz, Host: s.Address.Host, Port: s.Address.Port}
		}
	}
	return out, nil
}

// hosts returns the hosts exec's flags ask to read from their
// node_exporter, or nil when none: credentials and CAs come from each
// host's variables (pod.HostEnv), never from the command line.
func hosts(c pod.ExecCommand) (*runner.HostStatistics, error) {
	if len(c.Hosts) == 0 {
		return nil, nil
	}
	out := &runner.HostStatistics{Interval: c.HostPollInterval}
	for _, h := range c.Hosts {
		host := hoststats.Host{Name: h.Name, Role: h.Role, URL: h.URL, Target: h.Target,
			Username: os.Getenv(pod.HostEnv(h.Index, pod.HostEnvUsername)), Password: os.Getenv(pod.HostEnv(h.Index, pod.HostEnvPassword)),
			BearerToken: os.Getenv(pod.HostEnv(h.Index, pod.HostEnvToken))}
		ca := os.Getenv(pod.HostEnv(h.Index, pod.HostEnvCA))
		if strings.HasPrefix(h.URL, "https://") || ca != "" || h.InsecureSkipVerify {
			host.TLS = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: h.InsecureSkipVerify} //nolint:gosec // the spec's insecureSkipVerify, said in the result
			if ca != "" {
				host.TLS.RootCAs = x509.NewCertPool()
				if !host.TLS.RootCAs.AppendCertsFromPEM([]byte(ca)) {
					return nil, fmt.Errorf("host %s: the ca.crt of its Secret ($%s) holds no PEM certificate", h.Name, pod.HostEnv(h.Index, pod.HostEnvCA))
				}
			}
		}
		out.Hosts = append(out.Hosts, host)
	}
	return out, nil
}
