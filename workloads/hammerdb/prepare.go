package hammerdb

import (
	"fmt"
	"strings"

	"github.com/dbperf-io/dbperf-operator/workloads"
)

// ParsePrepare judges a schema build: HammerDB exits 0 even when the build
// failed, so its output decides.
func (HammerDB) ParsePrepare(in workloads.ParseInput) []string {
	out := string(in.Output)
	var reasons []string
	if !strings.Contains(out, "SCHEMA COMPLETE") {
		reasons = append(reasons, "the HammerDB schema build did not print SCHEMA COMPLETE")
	}
	if n := strings.Count(out, "FINISHED FAILED"); n > 0 {
		reasons = append(reasons, fmt.Sprintf("%d schema-build virtual user(s) FINISHED FAILED", n))
	}
	lines := workloads.Lines(in.Output)
	for i, line := range lines {
		if e := vuError.FindStringSubmatch(strings.TrimSpace(line)); e != nil {
			reasons = append(reasons, "Error in Virtual User "+e[1]+": "+strings.TrimSpace(e[2]))
			break
		}
		if msg, ok := refusedSetting(lines, i); ok {
			reasons = append(reasons, "HammerDB refused a configuration command: "+msg)
			break
		}
	}
	return reasons
}
