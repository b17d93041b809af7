package compare

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// Suspect is a statement, wait event or command whose time per
// transaction changed between the variants: the comparison's answer to
// why, from the diagnostics of each repetition's steady window.
type Suspect struct {
	Step string                 `json:"step,omitempty"`
	Kind results.DiagnosticKind `json:"kind"`
	// Name is the statement's full text, the wait event, the command.
	Name string `json:"name"`
	// BaselineMillis and CandidateMillis are each side's median over its
	// repetitions of the time per transaction, in milliseconds (a
	// repetition that did not record it counts zero).
	BaselineMillis  Num `json:"baselineMillis"`
	CandidateMillis Num `json:"candidateMillis"`
	// DeltaMillis is the Hodges-Lehmann shift of the candidate's time per
	// transaction from the baseline's, LowMillis … HighMillis its interval
	// (of the comparison's 1-alpha); P is Welch's t-test's p-value of the
	// two sides, PAdjusted over the step's suspects (Benjamini-Hochberg);
	// Confirmed when the interval excludes zero and PAdjusted < alpha.
	DeltaMillis Num  `json:"deltaMillis"`
	LowMillis   Num  `json:"lowMillis"`
	HighMillis  Num  `json:"highMillis"`
	P           Num  `json:"p"`
	PAdjusted   Num  `json:"pAdjusted"`
	Confirmed   bool `json:"confirmed"`
	// SharePercent is the shift's share of the change of the whole kind's
	// time per transaction (every statement's, every wait's).
	SharePercent Num `json:"sharePercent"`
	// Figures are its other counters per transaction that changed by a
	// fifth or more (rows, blocks, temp blocks, WAL bytes, ...), each
	// side's median.
	Figures []SuspectFigure `json:"figures,omitempty"`
	// PlanChanged: a statement's plan differs between the variants, both
	// plans given.
	PlanChanged   bool   `json:"planChanged,omitempty"`
	BaselinePlan  string `json:"baselinePlan,omitempty"`
	CandidatePlan string `json:"candidatePlan,omitempty"`
	// N are the repetitions with diagnostics of each side.
	BaselineN  int `json:"baselineN"`
	CandidateN int `json:"candidateN"`
}

// SuspectFigure is one counter per transaction, both sides' medians.
type SuspectFigure struct {
	Name      string `json:"name"`
	Baseline  Num    `json:"baseline"`
	Candidate Num    `json:"candidate"`
}

// maxSuspects is how many suspects of each kind a report keeps; a
// suspect whose shift is below suspectFloor of the kind's largest is left
// out (noise).
const (
	maxSuspects  = 10
	suspectFloor = 0.02
)

// diagSide is one side's diagnostics of one step, per repetition.
type diagSide struct {
	reps []*results.Diagnostics
}

// diagnosedSteps are the steps the baseline recorded diagnostics of, in
// its order, with each side's diagnostics by step (the candidate's only
// step paired with the baseline's only one whatever their names).
func diagnosedSteps(rep *Report, baseline, candidate Side, o Options) ([]string, map[string]*diagSide, map[string]*diagSide) {
	base, cand := gatherDiagnostics(baseline, nil), gatherDiagnostics(candidate, o.StepPairs)
	steps := make([]string, 0, len(base))
	for step := range base {
		steps = append(steps, step)
	}
	sort.Slice(steps, func(i, j int) bool {
		return cmp.Less(slices.Index(rep.Steps, steps[i]), slices.Index(rep.Steps, steps[j]))
	})
	// One step each, named differently (two runs of different sweeps
	// compared on their only step): paired anyway.
	if len(base) == 1 && len(cand) == 1 && cand[steps[0]] == nil {
		for _, c := range cand {
			cand = map[string]*diagSide{steps[0]: c}
		}
	}
	return steps, base, cand
}

// suspectFamilies are the kinds judged together, each family with its
// own false-discovery rate.
var suspectFamilies = [][]results.DiagnosticKind{
	{results.DiagnosticStatement, results.DiagnosticWait, results.DiagnosticCommand},
	{results.DiagnosticFunction},
}

// suspects ranks, for each step both sides recorded diagnostics of,
// every statement, wait event, command and function by how much its time
// per transaction changed, confirmed changes first.
func suspects(rep *Report, baseline, candidate Side, o Options) []Suspect {
	steps, base, cand := diagnosedSteps(rep, baseline, candidate, o)
	alpha := rep.Criteria.Alpha
	if alpha <= 0 {
		alpha = stats.DefaultAlpha
	}
	var out []Suspect
	for _, step := range steps {
		b, c := base[step], cand[step]
		if c == nil {
			continue
		}
		label := step
		if len(steps) == 1 {
			label = ""
		}
		// The step's suspects of the server's statistics (statements,
		// waits, commands) are one family, a profile's functions another:
		// each confirmed when its interval excludes 0 and its p-value
		// survives the false-discovery rate over its family (twenty
		// suspects at 5 vs 5 confirm one by chance without it). Functions
		// are another instrument, and many: in the statements' family
		// they would raise the bar the statements must pass (CI saw a
		// statement 6,500 times slower, p 0.007, left unconfirmed so).
		var family []Suspect
		for _, kinds := range suspectFamilies {
			var one []Suspect
			for _, kind := range kinds {
				one = append(one, suspectsOfKind(label, kind, b, c, alpha)...)
			}
			ps := make([]float64, len(one))
			for i, s := range one {
				ps[i] = float64(s.P)
			}
			for i, p := range stats.Adjust(ps, stats.BenjaminiHochberg) {
				one[i].PAdjusted = Num(p)
				one[i].Confirmed = p < alpha && (one[i].LowMillis > 0 || one[i].HighMillis < 0)
			}
			family = append(family, one...)
		}
		for _, kind := range results.DiagnosticKinds {
			var of []Suspect
			for _, s := range family {
				if s.Kind == kind {
					of = append(of, s)
				}
			}
			out = append(out, rankSuspects(of)...)
		}
	}
	return out
}

// gatherDiagnostics takes the diagnostics of a side's measurements that
// a comparison keeps (Succeeded, not rejected), by step (a candidate's
// under the baseline's step it is paired with).
func gatherDiagnostics(side Side, pairs map[string]string) map[string]*diagSide {
	out := map[string]*diagSide{}
	for _, r := range side.Runs {
		for _, st := range r.Steps {
			step := st.Name
			if p, ok := pairs[step]; ok {
				step = p
			}
			for _, m := range st.Repetitions {
				if _, rejected := benchv1.Rejected(r.Rejections, st.Name, m.Index); rejected || m.Verdict != benchv1.VerdictSucceeded {
					continue
				}
				for _, x := range r.Measurements {
					if x.Step == st.Name && x.Repetition == m.Index && x.Result != nil && x.Result.Diagnostics != nil && x.Result.Diagnostics.Transactions > 0 {
						if out[step] == nil {
							out[step] = &diagSide{}
						}
						out[step].reps = append(out[step].reps, x.Result.Diagnostics)
					}
				}
			}
		}
	}
	return out
}

// perTx is each repetition's time per transaction of every item of a
// kind (zero where a repetition did not record it), the kind's total, and
// each item's figures per transaction.
func (s *diagSide) perTx(kind results.DiagnosticKind) (map[string][]float64, []float64, map[string]map[string][]float64) {
	names := map[string]bool{}
	for _, d := range s.reps {
		for _, it := range d.Items {
			if it.Kind == kind {
				names[it.Name] = true
			}
		}
	}
	times := map[string][]float64{}
	figures := map[string]map[string][]float64{}
	total := make([]float64, len(s.reps))
	for name := range names {
		times[name] = make([]float64, len(s.reps))
		figures[name] = map[string][]float64{}
	}
	for i, d := range s.reps {
		for _, it := range d.Items {
			if it.Kind != kind {
				continue
			}
			times[it.Name][i] = d.Per(it.TimeMillis)
			total[i] += d.Per(it.TimeMillis)
			for f, v := range it.Figures {
				if figures[it.Name][f] == nil {
					figures[it.Name][f] = make([]float64, len(s.reps))
				}
				if results.LevelFigure(f) {
					figures[it.Name][f][i] = v // a level, not a count
				} else {
					figures[it.Name][f][i] = d.Per(v)
				}
			}
			if it.Calls > 0 {
				if figures[it.Name]["calls"] == nil {
					figures[it.Name]["calls"] = make([]float64, len(s.reps))
				}
				figures[it.Name]["calls"][i] = d.Per(it.Calls)
			}
		}
	}
	return times, total, figures
}

// plan is a side's plan of a statement: that of its repetition with the
// most calls of it.
func (s *diagSide) plan(name string) string {
	best, plan := -1.0, ""
	for _, d := range s.reps {
		for _, it := range d.Items {
			if it.Kind == results.DiagnosticStatement && it.Name == name && it.Plan != "" && it.Calls > best {
				best, plan = it.Calls, it.Plan
			}
		}
	}
	return plan
}

func suspectsOfKind(step string, kind results.DiagnosticKind, b, c *diagSide, alpha float64) []Suspect {
	bt, btotal, bfig := b.perTx(kind)
	ct, ctotal, cfig := c.perTx(kind)
	if len(bt) == 0 && len(ct) == 0 {
		return nil
	}
	totalShift, _, _ := stats.Shift(btotal, ctotal, alpha)
	names := map[string]bool{}
	for n := range bt {
		names[n] = true
	}
	for n := range ct {
		names[n] = true
	}
	var out []Suspect
	for name := range names {
		bv, cv := bt[name], ct[name]
		if bv == nil {
			bv = make([]float64, len(b.reps))
		}
		if cv == nil {
			cv = make([]float64, len(c.reps))
		}
		est, lo, hi := stats.Shift(bv, cv, alpha)
		s := Suspect{Step: step, Kind: kind, Name: name, BaselineMillis: Num(stats.Summarize(bv).Median), CandidateMillis: Num(stats.Summarize(cv).Median),
			DeltaMillis: Num(est), LowMillis: Num(lo), HighMillis: Num(hi), P: Num(welchP(bv, cv)),
			SharePercent: Num(math.NaN()), BaselineN: len(b.reps), CandidateN: len(c.reps)}
		if totalShift != 0 {
			s.SharePercent = Num(100 * est / totalShift)
		}
		s.Figures = changedFigures(bfig[name], cfig[name])
		if kind == results.DiagnosticStatement {
			s.BaselinePlan, s.CandidatePlan = b.plan(name), c.plan(name)
			s.PlanChanged = s.BaselinePlan != "" && s.CandidatePlan != "" && planShape(s.BaselinePlan) != planShape(s.CandidatePlan)
		}
		out = append(out, s)
	}
	return out
}

// rankSuspects orders one kind's suspects, confirmed first, then by the
// size of their shift, and keeps the largest (maxSuspects, none below
// suspectFloor of the largest).
func rankSuspects(out []Suspect) []Suspect {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Confirmed != out[j].Confirmed {
			return out[i].Confirmed
		}
		if ai, aj := math.Abs(float64(out[i].DeltaMillis)), math.Abs(float64(out[j].DeltaMillis)); ai != aj {
			return ai > aj
		}
		return out[i].Name < out[j].Name
	})
	largest := 0.0
	for _, s := range out {
		largest = max(largest, math.Abs(float64(s.DeltaMillis)))
	}
	kept := out[:0]
	for _, s := range out {
		if len(kept) == maxSuspects {
			break
		}
		if largest > 0 && math.Abs(float64(s.DeltaMillis)) >= suspectFloor*largest {
			kept = append(kept, s)
		}
	}
	return kept
}

// changedFigures are the figures whose medians differ by a fifth or more
// (or from zero), in name order.
func changedFigures(b, c map[string][]float64) []SuspectFigure {
	names := map[string]bool{}
	for n := range b {
		names[n] = true
	}
	for n := range c {
		names[n] = true
	}
	var out []SuspectFigure
	for n := range names {
		bm, cm := medianOf(b[n]), medianOf(c[n])
		if bm == cm || (bm != 0 && math.Abs(cm-bm)/math.Abs(bm) < 0.2) {
			continue
		}
		out = append(out, SuspectFigure{Name: n, Baseline: Num(bm), Candidate: Num(cm)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return stats.Summarize(v).Median
}

// planShape is a plan without what varies between two servers running
// the same plan: white space, and a parallel plan's worker counts.
func planShape(plan string) string {
	var lines []string
	for _, l := range strings.Split(plan, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Workers Planned:") || strings.HasPrefix(l, "JIT:") {
			continue
		}
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

// suspectLine is the summary's line of why, the first few confirmed
// suspects (the largest unconfirmed ones, said so, only for a
// regression or an improvement whose repetitions were too few): "Why: statement SELECT … +0.42 ms/tx (81 % of the change,
// plan changed); wait IO:DataFileRead +0.3 ms/tx".
func suspectLine(ss []Suspect, verdict OverallVerdict) string {
	var parts []string
	confirmed := slices.ContainsFunc(ss, func(s Suspect) bool { return s.Confirmed })
	if !confirmed && verdict != benchv1.OverallRegression && verdict != benchv1.OverallImprovement {
		return "" // no change to explain, and none of the suspects' own: their noise is not a why
	}
	for _, s := range ss {
		if confirmed && !s.Confirmed {
			continue
		}
		if len(parts) == 3 {
			break
		}
		p := fmt.Sprintf("%s %s %s ms/tx", s.Kind, shorten(s.Name, 64), signed(float64(s.DeltaMillis)))
		var notes []string
		if sp := float64(s.SharePercent); !math.IsNaN(sp) && s.Kind != results.DiagnosticWait {
			notes = append(notes, fmt.Sprintf("%.0f %% of the change", sp))
		}
		if s.PlanChanged {
			notes = append(notes, "plan changed")
		}
		if len(notes) > 0 {
			p += " (" + strings.Join(notes, ", ") + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	if !confirmed {
		return "Why (largest changes, none confirmed: too few repetitions for an interval, or none excludes 0): " + strings.Join(parts, "; ")
	}
	return "Why: " + strings.Join(parts, "; ")
}

// signed is a number with its sign, three significant digits.
func signed(v float64) string {
	s := fnum(v)
	if v > 0 {
		s = "+" + s
	}
	return s
}

// suspectFigures is a suspect's other changed figures in one line.
func suspectFigures(s Suspect) string {
	var parts []string
	for _, f := range s.Figures {
		parts = append(parts, fmt.Sprintf("%s %s → %s", f.Name, fnum(float64(f.Baseline)), fnum(float64(f.Candidate))))
	}
	return strings.Join(parts, "; ")
}

// renderSuspectsMarkdown writes the suspects as a Markdown table, the
// changed plans after it.
func renderSuspectsMarkdown(w io.Writer, r *Report) {
	if len(r.Suspects) == 0 {
		return
	}
	fmt.Fprintf(w, "\n**Why: the suspects** (time per transaction over the steady windows; Δ the shift with its interval):\n\n")
	fmt.Fprintf(w, "| Step | Kind | Name | %s ms/tx | %s ms/tx | Δ ms/tx | interval | share | what else changed (per tx) |\n|---|---|---|---:|---:|---:|---|---:|---|\n", r.Baseline, r.Candidate)
	for _, s := range r.Suspects {
		name := mdCell(shorten(s.Name, 120))
		if s.PlanChanged {
			name += " **plan changed**"
		}
		confirmed := ""
		if s.Confirmed {
			confirmed = " ✔"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s%s | %s … %s | %s | %s |\n", s.Step, s.Kind, name, fnum(float64(s.BaselineMillis)), fnum(float64(s.CandidateMillis)),
			signed(float64(s.DeltaMillis)), confirmed, fnum(float64(s.LowMillis)), fnum(float64(s.HighMillis)), pct(s.SharePercent), mdCell(suspectFigures(s)))
	}
	for _, s := range r.Suspects {
		if s.PlanChanged {
			fmt.Fprintf(w, "\nPlan of `%s`:\n\n%s:\n```\n%s\n```\n%s:\n```\n%s\n```\n", shorten(s.Name, 120), r.Baseline, s.BaselinePlan, r.Candidate, s.CandidatePlan)
		}
	}
}

// renderExplain writes what kubectl dbperf explain prints: the summary,
// what differed between the variants, and the suspects with their plans.
func renderExplain(w io.Writer, r *Report) error {
	for _, line := range summaryText(r) {
		fmt.Fprintln(w, wrap(line, tableWidth, "    "))
	}
	if len(r.Environment) > 0 {
		fmt.Fprintf(w, "\nWhat differed between the variants (%d):\n", len(r.Environment))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  FACT\t%s\t%s\n", strings.ToUpper(shorten(r.Baseline, 24)), strings.ToUpper(shorten(r.Candidate, 24)))
		for _, d := range r.Environment {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", shorten(d.What, 50), shorten(strings.Join(d.Baseline, ", "), 40), shorten(strings.Join(d.Candidate, ", "), 40))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, "\nNothing recorded of the environment differed between the variants.")
	}
	if len(r.Suspects) == 0 {
		fmt.Fprintln(w, "\nNo suspects: the runs recorded no diagnostics (telemetry.diagnostics; docs/telemetry.md, \"Diagnostics\").")
		return nil
	}
	fmt.Fprintf(w, "\nWhy — the suspects (time per transaction over the steady windows, each side's median; Δ the shift with its interval; ✔ confirmed: the interval excludes 0 and the p-value survives the FDR over the step's suspects):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  STEP\tKIND\tNAME\t%s\t%s\tΔ MS/TX\tINTERVAL\tSHARE\tALSO\n", strings.ToUpper(shorten(r.Baseline, 16)), strings.ToUpper(shorten(r.Candidate, 16)))
	for _, s := range r.Suspects {
		mark := ""
		if s.Confirmed {
			mark = " ✔"
		}
		if s.PlanChanged {
			mark += " plan changed"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s%s\t%s … %s\t%s\t%s\n", shorten(s.Step, 16), s.Kind, shorten(s.Name, 60), fnum(float64(s.BaselineMillis)), fnum(float64(s.CandidateMillis)),
			signed(float64(s.DeltaMillis)), mark, fnum(float64(s.LowMillis)), fnum(float64(s.HighMillis)), pct(s.SharePercent), shorten(suspectFigures(s), 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Suspects {
		if s.PlanChanged {
			fmt.Fprintf(w, "\nThe plan of %s changed:\n  %s:\n%s\n  %s:\n%s\n", shorten(s.Name, 100), r.Baseline, indent(s.BaselinePlan, "    "), r.Candidate, indent(s.CandidatePlan, "    "))
		}
	}
	return nil
}

func indent(text, by string) string {
	return by + strings.ReplaceAll(text, "\n", "\n"+by)
}

// welchP is Welch's t-test's two-sided p-value of two sides' times per
// transaction. A rank test cannot serve a family of suspects at the
// repetitions a comparison has: at 5 vs 5 its smallest p-value is 0.008,
// which no correction over twenty suspects lets through, however large
// the change; Welch's t uses the size of the change, as the
// per-operation family does (docs/statistics.md).
func welchP(b, c []float64) float64 {
	_, _, p := stats.WelchT(c, b)
	if math.IsNaN(p) {
		return 1
	}
	return p
}
