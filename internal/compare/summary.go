package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// OverallVerdict is a comparison's one verdict (the API's).
type OverallVerdict = benchv1.OverallVerdict

const (
	OverallPass         = benchv1.OverallPass
	OverallRegression   = benchv1.OverallRegression
	OverallImprovement  = benchv1.OverallImprovement
	OverallInconclusive = benchv1.OverallInconclusive
	OverallInvalid      = benchv1.OverallInvalid
)

// Finding is a judged change the summary names, largest effect first.
type Finding struct {
	Step          string        `json:"step"`
	Metric        string        `json:"metric"`
	Operation     string        `json:"operation,omitempty"`
	Verdict       stats.Verdict `json:"verdict"`
	DeltaPercent  Num           `json:"deltaPercent"`
	CILowPercent  Num           `json:"ciLowPercent"`
	CIHighPercent Num           `json:"ciHighPercent"`
	// FamilyWise says whether the change also survives Holm's correction
	// over its family (the chance of any false verdict, not only the
	// share of false ones): always true outside the operations family,
	// whose correction is already family-wise or which has one test.
	FamilyWise bool `json:"familyWise"`
	// Restated counts the rows that restate this one (grouped under it).
	Restated int `json:"restated,omitempty"`
	// Rows counts the operation's metrics that moved this way (its p50,
	// p95, p99, ...); the finding shows the largest.
	Rows int `json:"rows"`
	// Aggregate: the operation aggregates others (a tool's whole-run
	// latency over every request, k6's http_req_duration): listed after
	// the named operations, which it restates in part.
	Aggregate bool `json:"aggregate,omitempty"`
}

// Name is the finding's metric and operation, as the table names it.
func (f Finding) Name() string {
	if f.Operation != "" {
		return f.Metric + " " + f.Operation
	}
	return f.Metric
}

// Summary is what a reader needs first: the verdict, what got worse and
// better (largest effect first), what was left out and why, and how much
// of it may be noise.
type Summary struct {
	Verdict OverallVerdict `json:"verdict"`
	// Headline is the verdict in one line.
	Headline string    `json:"headline"`
	Worse    []Finding `json:"worse,omitempty"`
	Better   []Finding `json:"better,omitempty"`
	// Restating counts the rows grouped under the metric they restate,
	// and names it.
	Restating int `json:"restating,omitempty"`
	// FalseAllowed is how many of the flagged rows of the operations
	// family its false-discovery-rate control allows to be false (alpha ×
	// flagged), and FamilyWise how many of them survive Holm.
	Flagged      int     `json:"flagged,omitempty"`
	FalseAllowed float64 `json:"falseAllowed,omitempty"`
	FamilyWise   int     `json:"familyWise,omitempty"`
	// Bimodal are the rows whose repetitions fall into separate groups on
	// a side, each with the groups' values.
	Bimodal []string `json:"bimodal,omitempty"`
	// EnvironmentShift: nearly every operation moved the same way, the
	// ones the change cannot touch too: the platform, not the change?
	EnvironmentShift bool `json:"environmentShift,omitempty"`
	// Excluded says what was left out and why, in one line.
	Excluded string `json:"excluded,omitempty"`
	// Lines are the summary as a few lines of text, the headline first.
	Lines []string `json:"lines"`
}

// Summary limits: the findings a summary lists by name, and the share of
// operations moving the same way that reads as a shift of the whole
// environment (at least environmentShiftMin operations).
const (
	summaryFindings       = 5
	environmentShareMoved = 0.8
	environmentShiftMin   = 5
)

// rowFamily is a row's family of tests.
func (r *Report) rowFamily(row Row) int { return family(r.IsPrimary(row), row.Source, row.Metric) }

// judged says whether a row's verdict counts: not described, not restating
// another.
func (r *Report) judged(row Row) bool {
	return r.rowFamily(row) != familyDescribed && row.Restates == ""
}

// summarize writes the report's summary and sorts its rows worst first. It
// runs after the rows are tested: it marks the rows that restate another
// (restating), those bimodal on a side (bimodal), and tests the operations
// family's flagged rows against Holm.
func summarize(rep *Report) {
	rep.Steps = stepsOf(rep)
	markRestating(rep)
	holm := familyWise(rep)
	s := Summary{}
	aggregates := aggregateOperations(rep)
	type fkey struct {
		step, op string
		v        stats.Verdict
		metric   string // whole-run rows are each a finding of their own
	}
	found := map[fkey]int{} // → index in the list of its verdict
	restated := map[string]int{}
	for _, row := range rep.Rows {
		if row.Restates != "" {
			restated[row.Restates]++
		}
	}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		row.Bimodal = bimodal(rep, *row)
		if row.Bimodal != "" && rep.rowFamily(*row) != familyDescribed {
			s.Bimodal = append(s.Bimodal, shorten(metricName(*row), tableNameWidth)+": "+row.Bimodal)
		}
		if row.Restates != "" {
			s.Restating++
			rep.uncount(row.Verdict)
			continue
		}
		if !rep.judged(*row) || row.Verdict != stats.Worse && row.Verdict != stats.Better {
			continue
		}
		f := Finding{Step: row.StepLabel(), Metric: row.Metric, Operation: row.Operation, Verdict: row.Verdict,
			DeltaPercent: row.DeltaPercent, CILowPercent: row.CILowPercent, CIHighPercent: row.CIHighPercent, FamilyWise: true, Rows: 1,
			Aggregate: aggregates[row.Step+"/"+row.Operation]}
		if rep.rowFamily(*row) == familyOperations {
			s.Flagged++
			f.FamilyWise = holm[i]
			if f.FamilyWise {
				s.FamilyWise++
			}
		}
		f.Restated = restated[restateKey(*row)]
		list := &s.Worse
		if row.Verdict == stats.Better {
			list = &s.Better
		}
		// An operation is one finding: its largest change, with how many
		// of its metrics moved the same way.
		k := fkey{row.Step, row.Operation, row.Verdict, ""}
		if row.Operation == "" {
			k.metric = row.Metric
		}
		if j, ok := found[k]; ok {
			have := &(*list)[j]
			rows, restated, fw := have.Rows+1, have.Restated+f.Restated, have.FamilyWise || f.FamilyWise
			if rf, rh := representative(f.Metric), representative(have.Metric); rf < rh ||
				rf == rh && math.Abs(float64(f.DeltaPercent)) > math.Abs(float64(have.DeltaPercent)) {
				*have = f
			}
			have.Rows, have.Restated, have.FamilyWise = rows, restated, fw
			continue
		}
		found[k] = len(*list)
		*list = append(*list, f)
	}
	// Named operations first (what changed), then the whole run's metrics,
	// then aggregates over operations (k6's http_req_duration), each by
	// the size of its change.
	class := func(f Finding) int {
		switch {
		case f.Aggregate:
			return 2
		case f.Operation == "":
			return 1
		}
		return 0
	}
	bySize := func(fs []Finding) {
		sort.SliceStable(fs, func(i, j int) bool {
			if ci, cj := class(fs[i]), class(fs[j]); ci != cj {
				return ci < cj
			}
			return math.Abs(float64(fs[i].DeltaPercent)) > math.Abs(float64(fs[j].DeltaPercent))
		})
	}
	bySize(s.Worse)
	bySize(s.Better)
	alpha := rep.Criteria.WithDefaults().Alpha
	s.FalseAllowed = alpha * float64(s.Flagged)
	s.EnvironmentShift = environmentShift(rep, aggregates)
	s.Excluded = excludedLine(rep.Excluded)
	s.Verdict, s.Headline = overall(rep, s)
	s.Lines = summaryLines(rep, s, alpha)
	rep.Summary = &s
	sortRows(rep)
}

// overall is the report's one verdict and its headline.
func overall(rep *Report, s Summary) (OverallVerdict, string) {
	var primary []Row
	for _, row := range rep.Rows {
		if rep.IsPrimary(row) {
			primary = append(primary, row)
		}
	}
	vs := fmt.Sprintf("%s vs %s", rep.Candidate, rep.Baseline)
	switch {
	case len(rep.Rows) == 0:
		return OverallInvalid, vs + ": nothing compared"
	case len(s.Worse) > 0:
		return OverallRegression, fmt.Sprintf("%s: REGRESSION — %s", vs, findingList(s.Worse, 3))
	case len(s.Better) > 0:
		return OverallImprovement, fmt.Sprintf("%s: IMPROVEMENT — %s", vs, findingList(s.Better, 3))
	}
	for _, row := range primary {
		if row.Verdict != stats.NoChange {
			return OverallInconclusive, fmt.Sprintf("%s: INCONCLUSIVE — %s %s: %s", vs, metricName(row), pct(row.DeltaPercent), row.Reason)
		}
	}
	if len(primary) == 0 {
		return OverallInconclusive, vs + ": INCONCLUSIVE — the primary metric was not compared"
	}
	return OverallPass, fmt.Sprintf("%s: PASS — no change beyond ±%.1f %% (%s %s, CI %s)", vs, rep.Criteria.WithDefaults().MinEffectPercent,
		metricName(primary[0]), pct(primary[0].DeltaPercent), ci(primary[0]))
}

// findingList names up to n findings with their Δ, and how many more.
func findingList(fs []Finding, n int) string {
	var parts []string
	for i, f := range fs {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(fs)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", shorten(f.Name(), 48), pct(f.DeltaPercent)))
	}
	return strings.Join(parts, ", ")
}

// summaryLines are the summary as text: at most a few lines.
func summaryLines(rep *Report, s Summary, alpha float64) []string {
	lines := []string{s.Headline}
	show := summaryFindings
	if s.EnvironmentShift {
		show = 2 // not every operation by name: the platform moved
	}
	list := func(word string, fs []Finding) {
		if len(fs) == 0 {
			return
		}
		var parts []string
		for i, f := range fs {
			if i == show {
				parts = append(parts, fmt.Sprintf("… %d more", len(fs)-i))
				break
			}
			p := fmt.Sprintf("%s %s (%s)", shorten(f.Name(), 48), pct(f.DeltaPercent), ci(Row{CILowPercent: f.CILowPercent, CIHighPercent: f.CIHighPercent}))
			if f.Restated > 0 {
				p += fmt.Sprintf(" [+%d restating it]", f.Restated)
			}
			parts = append(parts, p)
		}
		lines = append(lines, fmt.Sprintf("%s (%d): %s", word, len(fs), strings.Join(parts, "; ")))
	}
	if s.EnvironmentShift {
		lines = append(lines, "Environment shift? Nearly every operation moved the same way, those the change cannot touch too: check the platform (node, neighbours, storage) before the change")
	}
	list("Worse", s.Worse)
	list("Better", s.Better)
	if l := rep.SequentialLine(); l != "" {
		lines = append(lines, l)
	}
	if l := pairedLine(rep); l != "" {
		lines = append(lines, l)
	}
	if l := covariateLine(rep); l != "" {
		lines = append(lines, l)
	}
	if l := detectableLine(rep, rep.Criteria.WithDefaults().MinEffectPercent); l != "" {
		lines = append(lines, l)
	}
	if s.Restating > 0 {
		verb := "rows restate"
		if s.Restating == 1 {
			verb = "row restates"
		}
		lines = append(lines, fmt.Sprintf("%d %s another (a per-operation rate moving with the %s, a count over the same time as its rate): grouped under it, not counted (docs/statistics.md)", s.Restating, verb, cmp.Or(rep.Primary, "primary metric")))
	}
	if s.Flagged > 0 {
		lines = append(lines, fmt.Sprintf("Noise: of the %d per-operation rows flagged, the false-discovery rate (%.0f %%) allows about %.1f to be false; %d of them survive a family-wise (Holm) correction", s.Flagged, 100*alpha, s.FalseAllowed, s.FamilyWise))
	}
	if len(s.Bimodal) > 0 {
		b := s.Bimodal
		more := ""
		if len(b) > 3 {
			b, more = b[:3], fmt.Sprintf("; … %d more", len(s.Bimodal)-3)
		}
		lines = append(lines, fmt.Sprintf("Bimodal (%d): %s%s — repetitions in separate groups are a finding: a noisy neighbour, a cold cache, two placements", len(s.Bimodal), strings.Join(b, "; "), more))
	}
	if l := orderLine(rep); l != "" {
		lines = append(lines, l)
	}
	if l := envLine(rep.Environment); l != "" {
		lines = append(lines, l)
	}
	if l := suspectLine(rep.Suspects, s.Verdict); l != "" {
		lines = append(lines, l)
	}
	if s.Excluded != "" {
		lines = append(lines, s.Excluded)
	}
	return lines
}

// excludedLine says in one line what was left out and why.
func excludedLine(ex []Exclusion) string {
	if len(ex) == 0 {
		return ""
	}
	by := map[string]int{}
	var keys []string
	for _, e := range ex {
		k := e.Verdict
		if e.Rejected != "" {
			k = "rejected"
		}
		if by[k] == 0 {
			keys = append(keys, k)
		}
		by[k]++
	}
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", by[k], k))
	}
	first := ex[0]
	why := strings.Join(first.Reasons, "; ")
	if first.Rejected != "" {
		why = first.Rejected
	}
	return fmt.Sprintf("Excluded: %d measurements (%s); first: %s %s #%d: %s", len(ex), strings.Join(parts, ", "), first.Run, first.Step, first.Repetition, shorten(why, 160))
}

// restateKey names a row as Row.Restates refers to it.
func restateKey(r Row) string { return r.Step + "/" + metricName(r) }

// markRestating marks the rows that restate another (Row.Restates):
//   - a per-operation throughput whose Δ % interval contains the step's
//     primary throughput's Δ %: in a closed loop every operation is a
//     constant share of the iteration rate, and falls with it;
//   - a count (not of errors) whose Δ % interval contains the Δ % of a
//     throughput of the same step and operation: a count over the same
//     duration is its rate again.
func markRestating(rep *Report) {
	rates := map[string]Row{} // step/operation → its throughput row
	var primaryRate *Row
	for i, row := range rep.Rows {
		if row.IsTelemetry() || !isThroughput(row.Metric) {
			continue
		}
		if _, ok := rates[row.Step+"/"+row.Operation]; !ok {
			rates[row.Step+"/"+row.Operation] = row
		}
		if rep.IsPrimary(row) {
			primaryRate = &rep.Rows[i]
		}
	}
	contains := func(r Row, d Num) bool {
		return !math.IsNaN(float64(d)) && float64(r.CILowPercent) <= float64(d) && float64(d) <= float64(r.CIHighPercent)
	}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if row.IsTelemetry() || rep.IsPrimary(*row) {
			continue
		}
		switch {
		case isThroughput(row.Metric) && row.Operation != "" && primaryRate != nil && primaryRate.Operation == "" &&
			row.Step == primaryRate.Step && contains(*row, primaryRate.DeltaPercent):
			row.Restates = restateKey(*primaryRate)
		case row.Unit == "count" && row.Direction != stats.LowerIsBetter:
			if rate, ok := rates[row.Step+"/"+row.Operation]; ok && contains(*row, rate.DeltaPercent) {
				row.Restates = restateKey(rate)
			}
		}
	}
}

// isThroughput says whether a metric is a rate of operations (the
// per-operation table's throughput column).
func isThroughput(metric string) bool { return slices.Contains(OpColumns[0].Names, metric) }

// familyWise tests the operations family's flagged rows against Holm's
// correction over the family's raw p-values: true where the row's change
// would survive it.
func familyWise(rep *Report) map[int]bool {
	var idx []int
	var ps []float64
	for i, row := range rep.Rows {
		if rep.rowFamily(row) == familyOperations && row.Direction != stats.Neutral && !math.IsNaN(float64(row.P)) {
			idx = append(idx, i)
			ps = append(ps, float64(row.P))
		}
	}
	alpha := rep.Criteria.WithDefaults().Alpha
	out := map[int]bool{}
	for k, p := range stats.Adjust(ps, stats.Holm) {
		out[idx[k]] = p < alpha
	}
	return out
}

// Bimodality: a side's repetitions fall into two groups of at least
// bimodalMinGroup when the largest gap between sorted values is at least
// bimodalGapRatio times the larger group's spread and bimodalMinGapPercent
// of the median.
const (
	bimodalMinGroup      = 2
	bimodalGapRatio      = 4.0
	bimodalMinGapPercent = 5.0
)

// bimodal describes the sides of a row whose repetitions fall into two
// separate groups ("" when neither does).
func bimodal(rep *Report, row Row) string {
	var parts []string
	for _, side := range []struct {
		name string
		vals []float64
	}{{rep.Baseline, row.BaselineVals}, {rep.Candidate, row.CandidateVals}} {
		if g := groups(side.vals); g != "" {
			parts = append(parts, side.name+" "+g)
		}
	}
	return strings.Join(parts, "; ")
}

// groups describes values that fall into two groups, "" otherwise.
func groups(vals []float64) string {
	if len(vals) < 2*bimodalMinGroup {
		return ""
	}
	v := slices.Clone(vals)
	sort.Float64s(v)
	gap, at := 0.0, 0
	for i := bimodalMinGroup; i <= len(v)-bimodalMinGroup; i++ {
		if d := v[i] - v[i-1]; d > gap {
			gap, at = d, i
		}
	}
	if at == 0 {
		return ""
	}
	lo, hi := v[:at], v[at:]
	spread := math.Max(lo[len(lo)-1]-lo[0], hi[len(hi)-1]-hi[0])
	median := v[len(v)/2]
	if gap < bimodalGapRatio*spread || median == 0 || 100*gap/math.Abs(median) < bimodalMinGapPercent {
		return ""
	}
	return fmt.Sprintf("in two groups: %d at %s…%s, %d at %s…%s", len(lo), fnum(lo[0]), fnum(lo[len(lo)-1]), len(hi), fnum(hi[0]), fnum(hi[len(hi)-1]))
}

// environmentShift: at least environmentShiftMin named operations of a
// step, and nearly all of them (environmentShareMoved) judged to move the
// same way.
func environmentShift(rep *Report, aggregates map[string]bool) bool {
	type key struct{ step, op string }
	verdict := map[key]stats.Verdict{}
	for _, row := range rep.Rows {
		if row.Operation == "" || !rep.judged(row) || rep.rowFamily(row) != familyOperations || aggregates[row.Step+"/"+row.Operation] {
			continue
		}
		k := key{row.Step, row.Operation}
		if v, ok := verdict[k]; !ok || verdictRank[row.Verdict] > verdictRank[v] {
			verdict[k] = row.Verdict
		}
	}
	moved := map[string]map[stats.Verdict]int{}
	total := map[string]int{}
	for k, v := range verdict {
		if moved[k.step] == nil {
			moved[k.step] = map[stats.Verdict]int{}
		}
		moved[k.step][v]++
		total[k.step]++
	}
	for step, n := range total {
		if n < environmentShiftMin {
			continue
		}
		for _, v := range []stats.Verdict{stats.Worse, stats.Better} {
			if float64(moved[step][v]) >= environmentShareMoved*float64(n) {
				return true
			}
		}
	}
	return false
}

// sortRows orders the table worst first: real regressions by size, then
// the rows that restate them, the inconclusive, the improvements and what
// restates them, the unchanged, and the servers' side described last;
// the primary metric first within its group, then the step order.
func sortRows(rep *Report) {
	steps := map[string]int{}
	for _, row := range rep.Rows {
		if _, ok := steps[row.Step]; !ok {
			steps[row.Step] = len(steps)
		}
	}
	group := func(row Row) int {
		restating := row.Restates != ""
		switch {
		case rep.rowFamily(row) == familyDescribed:
			return 7
		case row.Verdict == stats.Worse && !restating:
			return 0
		case row.Verdict == stats.Worse:
			return 1
		case row.Verdict == stats.Inconclusive:
			return 2
		case row.Verdict == stats.Better && !restating:
			return 3
		case row.Verdict == stats.Better:
			return 4
		}
		return 5
	}
	sort.SliceStable(rep.Rows, func(i, j int) bool {
		a, b := rep.Rows[i], rep.Rows[j]
		if ga, gb := group(a), group(b); ga != gb {
			return ga < gb
		}
		if pa, pb := rep.IsPrimary(a), rep.IsPrimary(b); pa != pb {
			return pa
		}
		if g := group(a); g <= 1 || g == 3 || g == 4 {
			if da, db := math.Abs(float64(a.DeltaPercent)), math.Abs(float64(b.DeltaPercent)); da != db {
				return da > db
			}
		}
		return steps[a.Step] < steps[b.Step]
	})
}

// shorten cuts a long name (a statement's text) to n characters for the
// terminal; the HTML and JSON keep it whole.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// deltaNote says, for a row whose Δ moves the other way than the medians
// printed beside it (a rank test's Hodges-Lehmann shift of bimodal
// repetitions, Welch's ratio of geometric means), which estimate the Δ is
// and the medians' change; "" for the others.
func deltaNote(rep *Report, row Row) string {
	b, c := row.Baseline.Median, row.Candidate.Median
	d := float64(row.DeltaPercent)
	if b == 0 || math.IsNaN(d) {
		return ""
	}
	medians := 100 * (c - b) / math.Abs(b)
	if math.Signbit(medians) == math.Signbit(d) || math.Abs(medians) < 0.05 || math.Abs(d) < 0.05 {
		return ""
	}
	short := map[string]string{"Hodges-Lehmann shift": "HL shift", "ratio of geometric means": "geo. means", "mean ratio of the rounds": "rounds"}[rep.estimate(row)]
	return fmt.Sprintf("Δ: %s; medians %s", short, pct(Num(medians)))
}

// deltaTextLong is a row's Δ with the estimate it comes from when that
// moves the other way than the medians (Markdown, HTML).
func deltaTextLong(rep *Report, row Row) string {
	if deltaNote(rep, row) == "" {
		return pct(row.DeltaPercent)
	}
	b, c := row.Baseline.Median, row.Candidate.Median
	return fmt.Sprintf("%s (%s; medians %s)", pct(row.DeltaPercent), rep.estimate(row), pct(Num(100*(c-b)/math.Abs(b))))
}

// estimate names what a row's Δ estimates.
func (rep *Report) estimate(row Row) string {
	if row.Sequential != nil {
		return "mean ratio of the rounds"
	}
	crit := Options{Criteria: rep.Criteria}.familyCriteria(rep.rowFamily(row))
	if crit.Test == stats.WelchLogTest {
		return "ratio of geometric means"
	}
	return "Hodges-Lehmann shift"
}

// uncount takes a row's verdict out of the report's counts.
func (r *Report) uncount(v stats.Verdict) {
	switch v {
	case stats.Better:
		r.Better--
	case stats.Worse:
		r.Worse--
	case stats.NoChange:
		r.NoChange--
	default:
		r.Inconclusive--
	}
}

// aggregateOperations are the operations of a step that aggregate others:
// those with latencies but no throughput of their own while other
// operations of the step have one (k6's http_req_duration and
// iteration_duration over every request, beside each named request's
// rate and latencies). Keyed "step/operation".
func aggregateOperations(rep *Report) map[string]bool {
	rated := map[string]bool{}
	stepRated := map[string]bool{}
	for _, row := range rep.Rows {
		if !row.IsTelemetry() && row.Operation != "" && isThroughput(row.Metric) {
			rated[row.Step+"/"+row.Operation] = true
			stepRated[row.Step] = true
		}
	}
	out := map[string]bool{}
	for _, row := range rep.Rows {
		k := row.Step + "/" + row.Operation
		if !row.IsTelemetry() && row.Operation != "" && stepRated[row.Step] && !rated[k] {
			out[k] = true
		}
	}
	return out
}

// representative ranks an operation's metrics for the one its finding
// shows: the median latency, then p95, p99, the throughput, the errors,
// then any other (a minimum or a p99.9 is a poor headline for a change).
func representative(metric string) int {
	order := []string{"latencyP50Millis", "latencyP95Millis", "latencyP99Millis"}
	if i := slices.Index(order, metric); i >= 0 {
		return i
	}
	switch {
	case isThroughput(metric):
		return len(order)
	case metric == "errorPercent":
		return len(order) + 1
	}
	return len(order) + 2
}

// stepsOf are the steps of the report's rows in the order first met.
func stepsOf(rep *Report) []string {
	var steps []string
	for _, row := range rep.Rows {
		if !slices.Contains(steps, row.Step) {
			steps = append(steps, row.Step)
		}
	}
	return steps
}
