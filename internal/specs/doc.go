// Package specs holds the pure builders of everything a BenchmarkRun
// creates: child names, labels, workload Jobs, the Valkey StatefulSet and
// Service, the CloudNativePG Cluster and the results ConfigMap. Nothing here
// talks to the API server, reads a clock or draws a random number, so every
// builder is tested with tables and golden files.
package specs
