// Package pod is the contract between the operator and the workload pods it
// creates: where things are mounted, which environment variables carry the
// target, how a tool is invoked (Endpoint, Invocation), and dbperf-runner's
// command lines as types that render themselves for the operator and parse
// themselves for the runner (ExecCommand with its Statistics and
// SessionCheck, QueryCommand, ParseCommand, ShowCommand, and the TLSClient
// each connection of the pod uses).
//
// Every flag is bound once, in a table that both rendering and parsing
// read (flags.go), and its name is spelled once (flagnames.go); one
// round-trip test renders and parses every command with every field set.
// The runner's defaults live here too (defaults.go), so that the operator
// and the runner cannot disagree on them.
//
// The package holds no client of any database and reads nothing but what
// a pod mounts: the manager links it, and so do the tools and the runner.
package pod
