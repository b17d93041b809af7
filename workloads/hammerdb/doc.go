// Package hammerdb runs HammerDB TPROC-C (`hammerdbcli auto <script>`) on
// PostgreSQL and MySQL. The Tcl scripts are generated from the spec: the
// schema build is the prepare step, and each virtual-user count is a timed
// test with ramp-up, duration and, by default, the extended time profile.
//
// The parser reads the TEST RESULT line (NOPM and TPM, in both word orders
// HammerDB has used), the time profile (xtprof report with or without the
// summary of all virtual users, tab separated or with the tabs stripped,
// and the old per-interval etprof lines), the transaction counter, and
// every sign that the run is not to be trusted: no TEST RESULT, a test cut
// short, virtual users that FINISHED FAILED or printed errors, dictionary
// settings HammerDB refused, incomplete timing data, and MySQL connections
// that were asked for TLS but report no cipher.
package hammerdb
