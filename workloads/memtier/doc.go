// Package memtier runs memtier_benchmark against a Redis-compatible or
// memcached server: an optional load step that writes every key of the range
// once, then one timed run per swept thread count and pipeline depth. It
// parses both the text table and the --json-out-file document, and treats
// error responses and connection errors as making a run untrustworthy,
// because memtier keeps printing a high ops/s when every request fails.
package memtier
