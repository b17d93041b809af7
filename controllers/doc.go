// Package controllers holds the BenchmarkRun reconciler. A reconcile reads as
// a pipeline of phases (provision → prepare → measure → finish → clean up);
// each phase is idempotent, so a crash or restart anywhere repeats work
// harmlessly and never duplicates a Job or loses a measurement: measurements
// are recorded (results ConfigMap, then status) before their Job is ever
// deleted, and Job names are deterministic.
package controllers
