// Package pgbench runs PostgreSQL's pgbench: an init step that builds the
// pgbench tables at a scale factor, then one timed run per swept client count.
// Connection settings reach pgbench through libpq's PG* variables, so no
// credential ever appears on a command line.
package pgbench
