package memtier

import (
	"regexp"
	"strconv"
	"strings"
)

// fatalPrefixes start the messages after which memtier_benchmark 2.1.1
// cannot finish: a connection whose setup failed (AUTH, SELECT, CLUSTER
// SLOTS, HELLO) stops sending, its thread never ends, and the main loop
// prints its status line (0 ops) once a second until the process is killed
// (shard_connection.cpp, process_response).
var fatalPrefixes = []string{
	"error: authentication failed",
	"database selection failed",
	"cluster slot failed",
	"error: HELLO failed",
}

// FatalOutput arms dbperf-runner's no-progress watchdog (runner.FatalOutput).
func (Memtier) FatalOutput(line string) bool {
	for _, p := range fatalPrefixes {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// reStatus is the status line memtier prints every second, also while hung:
// "[RUN #1 33%,   1 secs]  2 threads:           0 ops, …".
var reStatus = regexp.MustCompile(`^\[RUN #[0-9]+ [-0-9.]+%, +[0-9]+ secs\] +[0-9]+ threads: +([0-9]+) ops,`)

// StatusCount returns the operations a status line reports, so that a hung
// memtier's status lines are not taken for progress (runner.StatusOutput).
func (Memtier) StatusCount(line string) (float64, bool) {
	m := reStatus.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseFloat(m[1], 64)
	return n, err == nil
}
