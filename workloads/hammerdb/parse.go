package hammerdb

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

var (
	// TEST RESULT in the word order of HammerDB 4 and later, and of 3.x and earlier.
	resultNew = regexp.MustCompile(`TEST RESULT : System achieved ([0-9]+) NOPM from ([0-9]+) (\S+) TPM`)
	resultOld = regexp.MustCompile(`TEST RESULT : System achieved ([0-9]+) (\S+) TPM at ([0-9]+) NOPM`)
	vuPrefix  = regexp.MustCompile(`^Vuser ([0-9]+):(.*)$`)
	activeVUs = regexp.MustCompile(`^([0-9]+) Active Virtual Users configured`)
	finished  = regexp.MustCompile(`^FINISHED (SUCCESS|FAILED)`)
	vuError   = regexp.MustCompile(`^Error in Virtual User ([0-9]+): *(.*)$`)
	procError = regexp.MustCompile(`(?i)^(New Order|Payment|Delivery|Stock Level|Order Status|Slev|Ostat)\b.*\bError\b`)
	cipher    = regexp.MustCompile(`^Ssl_cipher\s*(.*)$`)
	dictSet   = regexp.MustCompile(`^(?:Changed (connection|tpcc):(\w+) from .* to (.*) for \S+|Value (.*) for (connection|tpcc):(\w+) is the same as existing value)`)
	dictShow  = regexp.MustCompile(`^\s+(\w+)\s+= ?(.*)$`)
	tcount    = regexp.MustCompile(`(?:^|[^0-9])([0-9]+) (\S+) tpm(?: @ (.+))?$`)
	rampup    = regexp.MustCompile(`Beginning rampup time of ([0-9]+) minutes`)
	timing    = regexp.MustCompile(`Timing test period of ([0-9]+) in minutes`)
)

// test is one timed test of the output: HammerDB's autopilot and our
// sweeps may run several in one log.
type test struct {
	vus           int
	nopm, tpm     float64
	db            string
	complete      bool
	rampupMinutes int
	minutes       int
}

// Parse reads hammerdbcli's output of a timed test and the time-profile
// report it wrote.
func (HammerDB) Parse(in workloads.ParseInput) *results.Result {
	r := results.New("hammerdb")
	r.Primary = results.Key{Name: "nopm"}
	lines := workloads.Lines(in.Output)

	var (
		tests      []*test
		cur        *test
		failedVUs  = map[string]string{}
		errorVUs   = map[string]string{}
		procErrors int
		firstProc  string
		ciphers    = map[string]string{}
		settings   = map[string]string{}
		dictErrors []string
		incomplete bool
	)
	start := func() *test {
		if cur == nil || cur.complete {
			cur = &test{}
			tests = append(tests, cur)
		}
		return cur
	}
	for i, raw := range lines {
		line := strings.TrimRight(raw, " \t")
		var x []string
		match := func(re *regexp.Regexp, s string) bool { x = re.FindStringSubmatch(s); return x != nil }
		switch {
		case match(dictSet, line):
			if x[2] != "" {
				settings[x[2]] = strings.TrimSpace(x[3])
			} else {
				settings[x[6]] = strings.TrimSpace(x[4])
			}
			continue
		case match(dictShow, line) && strings.Contains(x[1], "_"):
			settings[x[1]] = strings.TrimSpace(x[2])
			continue
		case match(vuError, strings.TrimSpace(line)): // printed without the Vuser prefix
			errorVUs[x[1]] = strings.TrimSpace(x[2])
			continue
		}
		if msg, ok := refusedSetting(lines, i); ok {
			dictErrors = append(dictErrors, msg)
			continue
		}
		if strings.Contains(strings.ToLower(line), "timing data incomplete") {
			incomplete = true
		}
		if match(tcount, line) {
			v, _ := strconv.ParseFloat(x[1], 64)
			addTransactionCount(r, v, x[3])
			continue
		}
		if !match(vuPrefix, line) {
			continue
		}
		vu, msg := x[1], strings.TrimSpace(x[2])
		switch {
		case match(rampup, msg):
			start().rampupMinutes, _ = strconv.Atoi(x[1])
		case match(timing, msg):
			start().minutes, _ = strconv.Atoi(x[1])
		case match(activeVUs, msg):
			start().vus, _ = strconv.Atoi(x[1])
		case match(resultNew, msg):
			t := start()
			t.nopm, _ = strconv.ParseFloat(x[1], 64)
			t.tpm, _ = strconv.ParseFloat(x[2], 64)
			t.db, t.complete = x[3], true
		case match(resultOld, msg):
			t := start()
			t.tpm, _ = strconv.ParseFloat(x[1], 64)
			t.nopm, _ = strconv.ParseFloat(x[3], 64)
			t.db, t.complete = x[2], true
		case match(finished, msg):
			if x[1] == "FAILED" {
				failedVUs[vu] = ""
			}
		case match(cipher, msg):
			ciphers[vu] = strings.TrimSpace(x[1])
		case match(vuError, msg):
			errorVUs[x[1]] = strings.TrimSpace(x[2])
		case procError.MatchString(msg):
			procErrors++
			if firstProc == "" {
				firstProc = msg
			}
		}
	}
	for vu := range failedVUs {
		failedVUs[vu] = errorVUs[vu]
	}

	for _, k := range []string{"count_ware", "num_vu", "rampup", "duration", "allwarehouse", "timeprofile", "driver", "ssl", "sslmode", "storedprocs", "keyandthink"} {
		for name, v := range settings {
			if strings.HasSuffix(name, "_"+k) && !strings.Contains(name, "pass") {
				r.SetParam(name, v)
			}
		}
	}

	var done []*test
	for _, t := range tests {
		if t.complete {
			done = append(done, t)
		}
	}
	if len(done) == 0 {
		switch {
		case len(tests) > 0:
			r.Fail("HammerDB began a timed test but printed no TEST RESULT: the test was cut short (the tool stopped, or the log ends early)")
		default:
			r.Fail("HammerDB printed no TEST RESULT line: no timed test ran (see the log for the reason)")
		}
	} else {
		last := done[len(done)-1]
		workloads.RequireWork(r, last.tpm+last.nopm, "transaction (TEST RESULT: 0 NOPM from 0 TPM)")
		r.Add(results.Metric{Name: "nopm", Value: last.nopm, Unit: "NOPM", Direction: results.HigherIsBetter})
		r.Add(results.Metric{Name: "tpm", Value: last.tpm, Unit: "TPM", Direction: results.HigherIsBetter})
		if last.vus > 0 {
			r.SetParam("virtualUsers", strconv.Itoa(last.vus))
		}
		if last.db != "" {
			r.SetParam("database", last.db)
		}
		if last.minutes > 0 {
			r.SetParam("durationMinutes", strconv.Itoa(last.minutes))
			r.SetParam("rampUpMinutes", strconv.Itoa(last.rampupMinutes))
		}
		if len(done) > 1 {
			for i, t := range done {
				op := fmt.Sprintf("test %d", i+1)
				if t.vus > 0 {
					op = fmt.Sprintf("test %d (%d VU)", i+1, t.vus)
				}
				r.Add(results.Metric{Name: "nopm", Operation: op, Value: t.nopm, Unit: "NOPM", Direction: results.HigherIsBetter, Detail: true})
			}
			r.Warnings = append(r.Warnings, fmt.Sprintf("the output holds %d timed tests (a sequence); the headline is the last, each is under nopm[test N]", len(done)))
		}
		if t := tests[len(tests)-1]; !t.complete {
			r.Fail("the last timed test (after %d completed) printed no TEST RESULT: it was cut short", len(done))
		}
	}

	if len(dictErrors) > 0 {
		r.Invalidate("HammerDB refused %d configuration command(s), so the test did not run with the settings asked for: %s", len(dictErrors), dictErrors[0])
	}
	if len(failedVUs) > 0 {
		ids := sortedIDs(failedVUs)
		why := failedVUs[ids[0]]
		if why == "" {
			why = "no error printed"
		}
		r.Invalidate("%d virtual user(s) FINISHED FAILED (Vuser %s: %s): the result counts fewer users than configured", len(ids), listIDs(ids), why)
	} else if len(errorVUs) > 0 {
		ids := sortedIDs(errorVUs)
		r.Invalidate("%d virtual user(s) reported errors (Vuser %s: %s)", len(ids), listIDs(ids), errorVUs[ids[0]])
	}
	judgeTransactionErrors(r, procErrors, firstProc, done)
	workloads.RequireSuccess(r)
	if incomplete {
		r.Invalidate("HammerDB reported Timing Data Incomplete: the time profile misses virtual users")
	}
	checkTLS(r, settings, ciphers)

	profile := in.Files[TimeProfileFile]
	if len(profile) == 0 {
		profile = in.Output
	}
	if !parseXTProfile(r, workloads.Lines(profile)) {
		parseETProfile(r, lines)
	}
	if len(done) > 0 && done[len(done)-1].rampupMinutes > 0 && hasProfile(r) {
		// xtprof times every call from a virtual user's start, and HammerDB
		// 4.12 has no setting to leave the ramp-up out.
		r.Warnings = append(r.Warnings, fmt.Sprintf("the time profile covers the %d-minute ramp-up as well as the timed test: HammerDB profiles from each virtual user's start", done[len(done)-1].rampupMinutes))
	}
	if timeProfileAsked(settings) && len(done) > 0 && !hasProfile(r) {
		r.Warnings = append(r.Warnings, "the time profile was asked for (timeprofile true) but no report was found")
	}
	// hammerdbcli exits 0 after most failures, but not after all: a crash
	// (exit 134, "alloc: invalid block") can follow a printed TEST RESULT.
	workloads.JudgeExitCode(r, "hammerdbcli", in.ExitCode)
	return r
}

// judgeTransactionErrors makes the errors virtual users printed (with
// raiseerror off, a failed transaction is printed and the user goes on) a
// share of the transactions, errorPercent, which validity.maxErrorPercent
// judges as it does every tool's. The transactions are TPM × the timed
// minutes of each test; errors printed during the ramp-up count too, so
// the share is, if anything, too high. Without a timed period the share
// is unknown and any error makes the test Invalid.
func judgeTransactionErrors(r *results.Result, errors int, first string, done []*test) {
	var transactions float64
	for _, t := range done {
		if t.minutes <= 0 {
			transactions = 0
			break
		}
		transactions += t.tpm * float64(t.minutes)
	}
	if errors == 0 {
		if transactions > 0 {
			workloads.AddErrorShare(r, 0, transactions)
		}
		return
	}
	r.Add(results.Metric{Name: "virtualUserErrors", Value: float64(errors), Unit: "count", Direction: results.LowerIsBetter})
	if transactions <= 0 {
		r.Invalidate("virtual users reported %d transaction error(s) (%q), and without a timed period their share of transactions is unknown; set raiseerror to see them", errors, first)
		return
	}
	r.Warnings = append(r.Warnings, fmt.Sprintf("virtual users reported %d transaction error(s) in about %.0f transactions (%q); set raiseerror to see them", errors, transactions, first))
	workloads.AddErrorShare(r, float64(errors), transactions)
}

func sortedIDs(m map[string]string) []string {
	ids := make([]string, 0, len(m))
	for k := range m {
		ids = append(ids, k)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, _ := strconv.Atoi(ids[i])
		b, _ := strconv.Atoi(ids[j])
		return a < b
	})
	return ids
}

// refusedSetting reads HammerDB's refusal of a configuration command at
// line i ("Error: Invalid number of arguments", with the usage line after
// it); "Error: in …" lines are a virtual user's, not the dictionary's.
func refusedSetting(lines []string, i int) (string, bool) {
	line := strings.TrimRight(lines[i], " \t")
	// diset's refusals that do not begin with "Error:" (HammerDB 4.x,
	// src/generic/gencli.tcl): an unknown key, a dictionary that does not
	// exist, a value the dictionary refused.
	if strings.HasPrefix(line, "Dictionary \"") && (strings.Contains(line, " exists but key \"") || strings.HasSuffix(line, " does not exist")) ||
		strings.HasPrefix(line, "Failed to set Dictionary value: ") {
		return line, true
	}
	msg, ok := strings.CutPrefix(line, "Error: ")
	if !ok || strings.HasPrefix(msg, "in ") {
		return "", false
	}
	if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "Usage: ") {
		msg += " (" + strings.TrimSpace(lines[i+1]) + ")"
	}
	return msg, true
}

// listIDs names up to eight virtual users.
func listIDs(ids []string) string {
	if len(ids) > 8 {
		return strings.Join(ids[:8], ", ") + fmt.Sprintf(" and %d more", len(ids)-8)
	}
	return strings.Join(ids, ", ")
}

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

// checkTLS invalidates a MySQL test that asked for TLS while a virtual user
// reports an empty cipher (an unencrypted connection), or none reports one.
func checkTLS(r *results.Result, settings, ciphers map[string]string) {
	if settings["mysql_ssl"] != "true" {
		for _, c := range ciphers {
			if c != "" {
				r.SetParam("tlsCipher", c)
				return
			}
		}
		return
	}
	r.SetParam("tlsRequested", "true")
	if len(ciphers) == 0 {
		r.Invalidate("TLS was requested (mysql_ssl true) but no virtual user printed its Ssl_cipher, so encryption cannot be confirmed")
		return
	}
	var plain []string
	seen := ""
	for vu, c := range ciphers {
		if c == "" {
			plain = append(plain, vu)
		} else {
			seen = c
		}
	}
	if len(plain) > 0 {
		ids := map[string]string{}
		for _, vu := range plain {
			ids[vu] = ""
		}
		r.Invalidate("TLS was requested (mysql_ssl true) but %d virtual user(s) connected without encryption (empty Ssl_cipher: Vuser %s)", len(plain), listIDs(sortedIDs(ids)))
		return
	}
	r.SetParam("tlsCipher", seen)
}

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

// addTransactionCount appends a point of the transaction counter; its
// timestamps, when logged, give the elapsed time, else the default 10 s
// refresh rate does.
func addTransactionCount(r *results.Result, tpm float64, stamp string) {
	elapsed := float64(len(r.TimeSeries)) * 10
	if stamp != "" {
		if t, err := time.Parse("Mon Jan _2 15:04:05 MST 2006", strings.TrimSpace(stamp)); err == nil {
			if len(r.TimeSeries) == 0 {
				r.SetParam("transactionCounterStart", t.UTC().Format(time.RFC3339))
			}
			if s, ok := r.Parameters["transactionCounterStart"]; ok {
				t0, _ := time.Parse(time.RFC3339, s)
				elapsed = t.Sub(t0).Seconds()
			}
		}
	}
	r.TimeSeries = append(r.TimeSeries, results.Point{ElapsedSeconds: elapsed, Values: map[string]float64{"tpm": tpm}})
}

var (
	xtSection = regexp.MustCompile(`^>>>>> (?:VIRTUAL USER ([0-9]+)|SUMMARY OF ([0-9]+) ACTIVE VIRTUAL USERS)`)
	xtProc    = regexp.MustCompile(`^>>>>> PROC: (\w+)`)
	// xtField reads "NAME: value" pairs whether tabs, spaces or nothing
	// separate them (some copies lost their tabs).
	xtField = regexp.MustCompile(`([A-Z][A-Z0-9]*): *([0-9.]+)(ms|%)?`)
)

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
