package main

import (
	"fmt"
	"os"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/runner/sessioncheck"
)

// sessionCheck returns the check exec's flags ask for, or nil when none:
// after the tool ran, one session of the workload's user (pod.EnvUsername,
// pod.EnvPassword, never flags) with the tool's TLS request must have
// negotiated the TLS version and cipher asked for and have the session
// variables asked for.
func sessionCheck(s pod.SessionCheck) (runner.SessionCheck, error) {
	if !s.Enabled() {
		return nil, nil
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	c := sessioncheck.Check{Host: s.Address.Host, Port: s.Address.Port, Username: os.Getenv(pod.EnvUsername), Password: os.Getenv(pod.EnvPassword),
		TLSVersion: s.TLSVersion, TLSCipher: s.TLSCipher, Variables: s.Variables}
	if !s.TLS.Enabled {
		return c, nil
	}
	var err error
	if c.TLS, c.Note, err = sessioncheck.TLSConfig(s.TLS, s.Address.Host, s.TLSVersion, s.TLSCipher); err != nil {
		return nil, fmt.Errorf("the session check's TLS: %w", err)
	}
	return c, nil
}
