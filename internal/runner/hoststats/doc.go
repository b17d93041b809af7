// Package hoststats reads the machines a run names (spec.telemetry.hosts)
// from their node_exporter while a measurement runs: a database appliance,
// the virtual machine behind a managed service, an application server, a
// load generator outside the cluster. The runner scrapes each endpoint
// directly (HTTP or HTTPS, basic auth or a bearer token), so no Prometheus
// is needed; the exposition is parsed by prometheus/common's expfmt.
//
// A node_exporter's counters are cumulative since the host booted, so one
// scrape at the window's start, one every interval and one at its end give
// the window's rates and their series at the interval's resolution. The
// figures are named as the Prometheus source names a node's (docs/
// telemetry.md), under the subject host/<name>: CPU busy and by mode for
// the host and per core, memory, load, disk per device (throughput, IOPS,
// await, utilisation, queue) and network per interface (bytes, packets,
// drops, errors). A host that rebooted during the window (its boot time
// changed) is a warning and a figure, hostRestarts.
package hoststats
