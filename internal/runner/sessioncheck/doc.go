// Package sessioncheck checks, after a measurement, that a session of the
// workload's user has what the endpoint asked for: over MySQL's protocol,
// the TLS version and cipher it negotiated (SHOW SESSION STATUS's
// Ssl_version and Ssl_cipher) and its session variables. dbperf-runner
// runs it once the tool has finished, so that it cannot disturb the
// tool's own sessions, and a difference makes the measurement Invalid with
// both values.
package sessioncheck
