package hammerdb

import (
	"fmt"
	"regexp"
	"slices"
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
	p := newOutputParser(r, workloads.Lines(in.Output))
	for i := range p.lines {
		p.line(i)
	}
	p.addSettings()
	done := p.completed()
	p.addTests(done)
	p.judge(done)
	p.addStages(p.addProfile(in.Files[TimeProfileFile], in.Output, done))
	// hammerdbcli exits 0 after most failures, but not after all: a crash
	// (exit 134, "alloc: invalid block") can follow a printed TEST RESULT.
	workloads.JudgeExitCode(r, "hammerdbcli", in.ExitCode)
	return r
}

// outputParser reads hammerdbcli's output a line at a time: the timed
// tests, what each virtual user reported, and the dictionary's settings.
type outputParser struct {
	r     *results.Result
	lines []string
	// tests are the timed tests begun, cur the last.
	tests []*test
	cur   *test
	// failedVUs and errorVUs hold the error each virtual user printed, by
	// its number: those that FINISHED FAILED, and all that printed one.
	failedVUs, errorVUs map[string]string
	// procErrors counts the transactions a virtual user printed as failed
	// (raiseerror off), firstProc is the first of them.
	procErrors int
	firstProc  string
	// ciphers are the TLS ciphers virtual users printed; settings the
	// dictionary's values as HammerDB printed them.
	ciphers, settings map[string]string
	// dictErrors are the configuration commands HammerDB refused.
	dictErrors []string
	// incomplete: HammerDB said its timing data is incomplete.
	incomplete bool
	// clock and marks are an autopilot's clock at its start and its
	// tests' (stages.go).
	clock int64
	marks []stageMark
}

func newOutputParser(r *results.Result, lines []string) *outputParser {
	return &outputParser{r: r, lines: lines, failedVUs: map[string]string{}, errorVUs: map[string]string{},
		ciphers: map[string]string{}, settings: map[string]string{}}
}

// start returns the timed test a line belongs to, beginning one after a
// completed test.
func (p *outputParser) start() *test {
	if p.cur == nil || p.cur.complete {
		p.cur = &test{}
		p.tests = append(p.tests, p.cur)
	}
	return p.cur
}

// line reads line i: a setting, a refused command, the transaction
// counter, or a virtual user's line.
func (p *outputParser) line(i int) {
	line := strings.TrimRight(p.lines[i], " \t")
	var x []string
	match := func(re *regexp.Regexp, s string) bool { x = re.FindStringSubmatch(s); return x != nil }
	switch {
	case match(dictSet, line):
		if x[2] != "" {
			p.settings[x[2]] = strings.TrimSpace(x[3])
		} else {
			p.settings[x[6]] = strings.TrimSpace(x[4])
		}
		return
	case match(dictShow, line) && strings.Contains(x[1], "_"):
		p.settings[x[1]] = strings.TrimSpace(x[2])
		return
	case match(vuError, strings.TrimSpace(line)): // printed without the Vuser prefix
		p.errorVUs[x[1]] = strings.TrimSpace(x[2])
		return
	}
	if p.mark(line) {
		return
	}
	if msg, ok := refusedSetting(p.lines, i); ok {
		p.dictErrors = append(p.dictErrors, msg)
		return
	}
	if strings.Contains(strings.ToLower(line), "timing data incomplete") {
		p.incomplete = true
	}
	if match(tcount, line) {
		v, _ := strconv.ParseFloat(x[1], 64)
		addTransactionCount(p.r, v, x[3])
		return
	}
	if match(vuPrefix, line) {
		p.virtualUser(x[1], strings.TrimSpace(x[2]))
	}
}

// virtualUser reads what virtual user vu printed: a timed test's
// beginning, length, users or result, its end, its cipher, an error.
func (p *outputParser) virtualUser(vu, msg string) {
	var x []string
	match := func(re *regexp.Regexp) bool { x = re.FindStringSubmatch(msg); return x != nil }
	switch {
	case match(rampup):
		p.start().rampupMinutes, _ = strconv.Atoi(x[1])
	case match(timing):
		p.start().minutes, _ = strconv.Atoi(x[1])
	case match(activeVUs):
		p.start().vus, _ = strconv.Atoi(x[1])
	case match(resultNew):
		t := p.start()
		t.nopm, _ = strconv.ParseFloat(x[1], 64)
		t.tpm, _ = strconv.ParseFloat(x[2], 64)
		t.db, t.complete = x[3], true
	case match(resultOld):
		t := p.start()
		t.tpm, _ = strconv.ParseFloat(x[1], 64)
		t.nopm, _ = strconv.ParseFloat(x[3], 64)
		t.db, t.complete = x[2], true
	case match(finished):
		if x[1] == "FAILED" {
			p.failedVUs[vu] = ""
		}
	case match(cipher):
		p.ciphers[vu] = strings.TrimSpace(x[1])
	case match(vuError):
		p.errorVUs[x[1]] = strings.TrimSpace(x[2])
	case procError.MatchString(msg):
		p.procErrors++
		if p.firstProc == "" {
			p.firstProc = msg
		}
	}
}

// reportedSettings are the dictionary's keys (after the database prefix)
// a result records.
var reportedSettings = []string{"count_ware", "num_vu", "rampup", "duration", "allwarehouse", "timeprofile", "driver", "ssl", "sslmode", "storedprocs", "keyandthink"}

// addSettings records the settings the test ran with, passwords left out.
func (p *outputParser) addSettings() {
	for _, k := range reportedSettings {
		for name, v := range p.settings {
			if strings.HasSuffix(name, "_"+k) && !strings.Contains(name, "pass") {
				p.r.SetParam(name, v)
			}
		}
	}
}

// completed are the timed tests that printed their result.
func (p *outputParser) completed() []*test {
	var done []*test
	for _, t := range p.tests {
		if t.complete {
			done = append(done, t)
		}
	}
	return done
}

// addTests records the last completed test as the headline, and each one
// of a sequence of several as a detail; a test without its result fails.
func (p *outputParser) addTests(done []*test) {
	r := p.r
	if len(done) == 0 {
		if len(p.tests) > 0 {
			r.Fail("HammerDB began a timed test but printed no TEST RESULT: the test was cut short (the tool stopped, or the log ends early)")
		} else {
			r.Fail("HammerDB printed no TEST RESULT line: no timed test ran (see the log for the reason)")
		}
		return
	}
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
	if len(done) > 1 && len(p.marks) == 0 { // an autopilot's tests are its stages
		addSequence(r, done)
	}
	if t := p.tests[len(p.tests)-1]; !t.complete {
		r.Fail("the last timed test (after %d completed) printed no TEST RESULT: it was cut short", len(done))
	}
}

// addSequence records each test of a sequence under nopm[test N].
func addSequence(r *results.Result, done []*test) {
	for i, t := range done {
		op := fmt.Sprintf("test %d", i+1)
		if t.vus > 0 {
			op = fmt.Sprintf("test %d (%d VU)", i+1, t.vus)
		}
		r.Add(results.Metric{Name: "nopm", Operation: op, Value: t.nopm, Unit: "NOPM", Direction: results.HigherIsBetter, Detail: true})
	}
	r.Warnings = append(r.Warnings, fmt.Sprintf("the output holds %d timed tests (a sequence); the headline is the last, each is under nopm[test N]", len(done)))
}

// judge invalidates a test that did not run as asked: refused settings,
// failed or erring virtual users, failed transactions, incomplete timing
// data, TLS asked for and not used.
func (p *outputParser) judge(done []*test) {
	r := p.r
	for vu := range p.failedVUs {
		p.failedVUs[vu] = p.errorVUs[vu]
	}
	if len(p.dictErrors) > 0 {
		r.Invalidate("HammerDB refused %d configuration command(s), so the test did not run with the settings asked for: %s", len(p.dictErrors), p.dictErrors[0])
	}
	if len(p.failedVUs) > 0 {
		ids := sortedIDs(p.failedVUs)
		why := p.failedVUs[ids[0]]
		if why == "" {
			why = "no error printed"
		}
		r.Invalidate("%d virtual user(s) FINISHED FAILED (Vuser %s: %s): the result counts fewer users than configured", len(ids), listIDs(ids), why)
	} else if len(p.errorVUs) > 0 {
		ids := sortedIDs(p.errorVUs)
		r.Invalidate("%d virtual user(s) reported errors (Vuser %s: %s)", len(ids), listIDs(ids), p.errorVUs[ids[0]])
	}
	judgeTransactionErrors(r, p.procErrors, p.firstProc, done)
	workloads.RequireSuccess(r)
	if p.incomplete {
		r.Invalidate("HammerDB reported Timing Data Incomplete: the time profile misses virtual users")
	}
	checkTLS(r, p.settings, p.ciphers)
}

// addProfile adds the transactions' latencies from the xtprof report (its
// file, else the output), else from the old event time profile.
func (p *outputParser) addProfile(file, output []byte, done []*test) [][]results.Metric {
	r := p.r
	profile := file
	if len(profile) == 0 {
		profile = output
	}
	// HammerDB appends each timed test's report to the file: the headline
	// is the last test's, and each test of an autopilot has its own.
	reports := xtReports(workloads.Lines(profile))
	if !parseXTProfile(r, reports[len(reports)-1]) {
		parseETProfile(r, p.lines)
	}
	var perTest [][]results.Metric
	if len(p.marks) > 0 {
		for _, rep := range reports {
			if one := results.New("hammerdb"); parseXTProfile(one, rep) {
				perTest = append(perTest, slices.DeleteFunc(one.Metrics, func(m results.Metric) bool { return m.Operation == "" }))
			}
		}
		if len(perTest) != len(done) && len(perTest) > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the time profile holds %d reports for %d timed tests: the stages' transaction figures are left out", len(perTest), len(done)))
			perTest = nil
		}
	}
	if len(done) > 0 && done[len(done)-1].rampupMinutes > 0 && hasProfile(r) {
		// xtprof times every call from a virtual user's start, and HammerDB
		// 4.12 has no setting to leave the ramp-up out.
		r.Warnings = append(r.Warnings, fmt.Sprintf("the time profile covers the %d-minute ramp-up as well as the timed test: HammerDB profiles from each virtual user's start", done[len(done)-1].rampupMinutes))
	}
	if timeProfileAsked(p.settings) && len(done) > 0 && !hasProfile(r) {
		r.Warnings = append(r.Warnings, "the time profile was asked for (timeprofile true) but no report was found")
	}
	return perTest
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
