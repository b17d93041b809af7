package main

import (
	"fmt"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
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
	return &runner.ServerStatistics{Protocol: s.Protocol, Config: cfg, Interval: s.PollInterval}, nil
}
