package hammerdb

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// The transactions' time profile: xtprof's report of every virtual user
// (HammerDB 4), or the old event time profile of one (etprof).

func timeProfileAsked(settings map[string]string) bool {
	return settings["pg_timeprofile"] == "true" || settings["mysql_timeprofile"] == "true"
}

func hasProfile(r *results.Result) bool {
	for _, m := range r.Metrics {
		if m.Operation != "" && strings.HasPrefix(m.Name, "latency") {
			return true
		}
	}
	return false
}

var (
	xtSection = regexp.MustCompile(`^>>>>> (?:VIRTUAL USER ([0-9]+)|SUMMARY OF ([0-9]+) ACTIVE VIRTUAL USERS)`)
	xtProc    = regexp.MustCompile(`^>>>>> PROC: (\w+)`)
	// xtField reads "NAME: value" pairs whether tabs, spaces or nothing
	// separate them (some copies lost their tabs).
	xtField = regexp.MustCompile(`([A-Z][A-Z0-9]*): *([0-9.]+)(ms|%)?`)
)

// xtReport begins each report of the time profile.
var xtReport = regexp.MustCompile(`Hammerdb Time Profile Report @`)

// xtReports splits the time profile into its reports, one per timed test
// (HammerDB appends each test's to the file); all of it is one report
// when no header is found.
func xtReports(lines []string) [][]string {
	var out [][]string
	for i, line := range lines {
		if xtReport.MatchString(line) || i == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], line)
	}
	if len(out) == 0 {
		out = [][]string{nil}
	}
	return out
}

// procStats are one transaction's figures in one section of the report.
type procStats map[string]float64

// parseXTProfile reads the xtprof report: the summary of all virtual users
// when present, else the virtual users combined (percentiles then are upper
// bounds, the largest of any user).
func parseXTProfile(r *results.Result, lines []string) bool {
	var (
		section  string
		proc     string
		summary  = map[string]procStats{}
		perVU    = map[string][]procStats{}
		order    []string
		anyFound bool
	)
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if m := xtSection.FindStringSubmatch(line); m != nil {
			section, proc = "vu", ""
			if m[2] != "" {
				section = "summary"
				r.SetParam("timeProfileVirtualUsers", m[2])
			}
			continue
		}
		if m := xtProc.FindStringSubmatch(line); m != nil && section != "" {
			proc = strings.ToUpper(m[1])
			if _, ok := perVU[proc]; !ok && summary[proc] == nil {
				order = append(order, proc)
			}
			stats := procStats{}
			if section == "summary" {
				summary[proc] = stats
			} else {
				perVU[proc] = append(perVU[proc], stats)
			}
			continue
		}
		if proc == "" || !strings.HasPrefix(line, "CALLS:") && !strings.HasPrefix(line, "P99:") {
			continue
		}
		stats := summary[proc]
		if section != "summary" {
			list := perVU[proc]
			stats = list[len(list)-1]
		}
		for _, f := range xtField.FindAllStringSubmatch(line, -1) {
			v, err := strconv.ParseFloat(f[2], 64)
			if err == nil {
				stats[f[1]] = v
				anyFound = true
			}
		}
	}
	if !anyFound {
		return false
	}
	upper := len(summary) == 0
	if upper {
		r.Warnings = append(r.Warnings, "the time profile has no summary of all virtual users: percentiles are upper bounds (the largest of any user), since percentiles of separate users cannot be combined")
	}
	var recounted []string
	for _, proc := range order {
		stats := summary[proc]
		if upper {
			stats = combine(perVU[proc])
		} else if len(perVU[proc]) > 0 && countFromVirtualUsers(stats, combine(perVU[proc])) {
			recounted = append(recounted, proc)
		}
		addProc(r, proc, stats, upper)
	}
	if len(recounted) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the time profile's summary does not count the calls its virtual users do (%s): calls and ratios are taken from the virtual users (HammerDB 4.12 counts each call twice in the summary)",
			strings.Join(recounted, ", ")))
	}
	return true
}

// countFromVirtualUsers takes a transaction's calls and total time from the
// per-user sections: HammerDB 4.12's summary counts every call twice (its
// xtprof module appends each user's samples to the summary in two places
// when job storage is on, the CLI's default), so its CALLS, TOTAL and RATIO
// are twice the truth — a RATIO can pass 100 %. Its latencies are right
// (the same samples twice). The ratio is scaled by the totals' error, which
// keeps HammerDB's own normalisation by the median elapsed time.
func countFromVirtualUsers(summary, users procStats) bool {
	if summary["CALLS"] == users["CALLS"] {
		return false
	}
	if summary["TOTAL"] > 0 {
		summary["RATIO"] *= users["TOTAL"] / summary["TOTAL"]
	}
	summary["CALLS"], summary["TOTAL"] = users["CALLS"], users["TOTAL"]
	return true
}

// combine adds up per-user figures: calls and totals add, the average is
// weighted by calls, min and max are the extremes; percentiles take the
// largest (an upper bound).
func combine(list []procStats) procStats {
	out := procStats{"MIN": math.Inf(1)}
	for _, s := range list {
		out["CALLS"] += s["CALLS"]
		out["TOTAL"] += s["TOTAL"]
		out["MIN"] = math.Min(out["MIN"], s["MIN"])
		out["MAX"] = math.Max(out["MAX"], s["MAX"])
		for _, p := range []string{"P99", "P95", "P75", "P50", "P25"} {
			if v, ok := s[p]; ok {
				out[p] = math.Max(out[p], v)
			}
		}
	}
	if out["CALLS"] > 0 {
		out["AVG"] = out["TOTAL"] / out["CALLS"]
	}
	if math.IsInf(out["MIN"], 1) {
		delete(out, "MIN")
	}
	return out
}

func addProc(r *results.Result, proc string, s procStats, upper bool) {
	if c, ok := s["CALLS"]; ok {
		r.Add(results.Metric{Name: "calls", Operation: proc, Value: c, Unit: "count", Direction: results.Neutral, Detail: true})
	}
	for _, f := range []struct {
		key, name string
		detail    bool
	}{
		{"AVG", "latencyAvgMillis", false}, {"P50", "latencyP50Millis", true}, {"P95", "latencyP95Millis", false},
		{"P99", "latencyP99Millis", false}, {"MIN", "latencyMinMillis", true}, {"MAX", "latencyMaxMillis", true},
		{"P25", "latencyP25Millis", true}, {"P75", "latencyP75Millis", true},
	} {
		v, ok := s[f.key]
		if !ok {
			continue
		}
		name := f.name
		if upper && strings.HasPrefix(f.key, "P") {
			name = strings.Replace(name, "Millis", "UpperBoundMillis", 1)
		}
		r.Add(results.Metric{Name: name, Operation: proc, Value: v, Unit: "ms", Direction: results.LowerIsBetter, Detail: f.detail})
	}
	if v, ok := s["RATIO"]; ok {
		r.Add(results.Metric{Name: "timeRatioPercent", Operation: proc, Value: v, Unit: "%", Direction: results.Neutral, Detail: true})
	}
}

var etLine = regexp.MustCompile(`^\|(\w+)\|MIN-([0-9.]+)\|P50%-([0-9.]+)\|P95%-([0-9.]+)\|P99%-([0-9.]+)\|MAX-([0-9.]+)\|SAMPLES-([0-9]+)`)

// parseETProfile reads the old event time profile: one monitored virtual
// user's percentiles every 10 s, in microseconds. Windows cannot be merged
// into true percentiles: the largest window percentile is reported as an
// upper bound, with the calls, minimum and maximum over all windows.
func parseETProfile(r *results.Result, lines []string) {
	type agg struct{ calls, min, max, p95, p99 float64 }
	got := map[string]*agg{}
	var order []string
	for _, raw := range lines {
		m := vuPrefix.FindStringSubmatch(strings.TrimSpace(raw))
		if m == nil {
			continue
		}
		e := etLine.FindStringSubmatch(strings.TrimSpace(m[2]))
		if e == nil {
			continue
		}
		proc := strings.ToUpper(e[1])
		if proc == "GETTIMESTAMP" {
			continue
		}
		a := got[proc]
		if a == nil {
			a = &agg{min: math.Inf(1)}
			got[proc] = a
			order = append(order, proc)
		}
		f := func(i int) float64 { v, _ := strconv.ParseFloat(e[i], 64); return v / 1000 }
		n, _ := strconv.ParseFloat(e[7], 64)
		a.calls += n
		a.min = math.Min(a.min, f(2))
		a.max = math.Max(a.max, f(6))
		a.p95 = math.Max(a.p95, f(4))
		a.p99 = math.Max(a.p99, f(5))
	}
	if len(order) == 0 {
		return
	}
	r.Warnings = append(r.Warnings, "the event time profile (etprof) samples one virtual user in 10 s windows: percentiles are upper bounds (the largest window's), since window percentiles cannot be combined")
	for _, proc := range order {
		a := got[proc]
		addProc(r, proc, procStats{"CALLS": a.calls, "MIN": a.min, "MAX": a.max, "P95": a.p95, "P99": a.p99}, true)
	}
}
