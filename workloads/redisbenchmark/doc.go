// Package redisbenchmark runs redis-benchmark (or valkey-benchmark, its
// twin), which ships inside the Redis and Valkey images: one run of the
// chosen tests per swept client count and pipeline depth, read from its CSV
// output (or from its text and quiet formats, for old logs).
package redisbenchmark
