// Package controllers holds the BenchmarkRun reconciler. A reconcile reads as
// a pipeline of phases (provision → prepare → measure → finish → clean up);
// each phase is idempotent, so a crash or restart anywhere repeats work
// harmlessly and never duplicates a Job or loses a measurement: measurements
// are recorded (results ConfigMap, then status) before their Job is ever
// deleted, and Job names are deterministic.
//
// The other two reconcilers have packages of their own: comparison (the
// variants of a BenchmarkComparison run as BenchmarkRuns and compared) and
// schedule (runs or comparisons triggered on a cron, their history judged
// for regressions). What the three share lives under controllers/internal:
// status (patching, bounds, events, children), retention (a parent's
// results kept when it goes) and metrics (the manager's Prometheus series).
package controllers

import "github.com/dbperf-io/dbperf-operator/controllers/internal/status"

// EventSource is the component the manager's events name as their source
// (cmd/manager's recorders and the events a schedule creates itself).
const EventSource = status.EventSource
