package telemetry

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Conditions of a Rule (the API's RuleCondition).
const (
	RuleAbove      = "Above"
	RuleBelow      = "Below"
	RulePercentile = "Percentile"
	RuleImbalance  = "Imbalance"
)

// Rule judges a measurement on one of its series (spec.validity.rules).
type Rule struct {
	Name, Series string
	// Subject: empty for every subject that recorded the series.
	Subject   string
	Condition string
	Threshold float64
	// For: how long Above or Below must hold (0: one sample).
	For time.Duration
	// Percentile for RulePercentile (1-100).
	Percentile float64
	// Warn: a broken rule warns instead of invalidating.
	Warn bool
}

// Breach is a broken rule: whose series, when, and the figure.
type Breach struct {
	Rule    Rule
	Subject string
	// From and To bound the samples that broke it (the window for a
	// percentile or an imbalance).
	From, To time.Time
	Value    float64
	Text     string
}

// JudgeRules applies the rules to the result's series: each broken rule
// invalidates the result or warns, naming the series, the moment and the
// figure; a rule whose series was not recorded is a warning that it was
// not judged. It returns the breaches.
//
// Judging a result twice (a reconcile repeated) gives the same reasons and
// warnings once.
func JudgeRules(r *results.Result, rules []Rule) []Breach {
	var out []Breach
	for _, rule := range rules {
		breaches, judged := judgeRule(r.Series, rule)
		if judged == 0 {
			warnOnce(r, fmt.Sprintf("validity rule %s was not judged: no series %s was recorded", rule.Name, describeSeries(rule)))
			continue
		}
		for _, b := range breaches {
			if rule.Warn {
				warnOnce(r, b.Text)
			} else {
				r.Invalidate("%s", b.Text)
			}
		}
		out = append(out, breaches...)
	}
	return out
}

func warnOnce(r *results.Result, w string) {
	if !slices.Contains(r.Warnings, w) {
		r.Warnings = append(r.Warnings, w)
	}
}

// isRole says whether a rule's subject names a role (host, node, target,
// loadgen) rather than one subject.
func isRole(subject string) bool {
	switch Role(subject) {
	case RoleHost, RoleNode, RoleTarget, RoleLoadgen:
		return true
	}
	return false
}

func describeSeries(rule Rule) string {
	name := rule.Series
	if rule.Condition == RuleImbalance {
		name += ".*"
	}
	if rule.Subject == "" {
		return name + " (of any subject)"
	}
	return name + "[" + rule.Subject + "]"
}

// judgeRule returns the rule's breaches and how many series (or
// families) it judged.
func judgeRule(all []results.Series, rule Rule) ([]Breach, int) {
	var out []Breach
	judged := 0
	if rule.Condition == RuleImbalance && isRole(rule.Subject) {
		// The busiest of a role's subjects (hosts, nodes, target pods)
		// against their mean.
		var family []results.Series
		for _, s := range all {
			if s.Name == rule.Series && strings.HasPrefix(s.Subject, rule.Subject+"/") && len(s.Samples) > 0 {
				family = append(family, s)
			}
		}
		if len(family) == 0 {
			return nil, 0
		}
		for i := range family { // imbalance names the member by its series' name
			family[i].Name = family[i].Name + "[" + family[i].Subject + "]"
		}
		if b, ok := imbalance(rule, rule.Subject, family); ok {
			return []Breach{b}, 1
		}
		return nil, 1
	}
	if rule.Condition == RuleImbalance {
		families := map[string][]results.Series{}
		var subjects []string
		for _, s := range all {
			base, _, ok := strings.Cut(s.Name, ".")
			if !ok || base != rule.Series || (rule.Subject != "" && s.Subject != rule.Subject) || len(s.Samples) == 0 {
				continue
			}
			if _, seen := families[s.Subject]; !seen {
				subjects = append(subjects, s.Subject)
			}
			families[s.Subject] = append(families[s.Subject], s)
		}
		sort.Strings(subjects)
		for _, subj := range subjects {
			judged++
			if b, ok := imbalance(rule, subj, families[subj]); ok {
				out = append(out, b)
			}
		}
		return out, judged
	}
	for _, s := range all {
		if s.Name != rule.Series || (rule.Subject != "" && s.Subject != rule.Subject) || len(s.Samples) == 0 {
			continue
		}
		judged++
		samples := append([]results.Sample(nil), s.Samples...)
		sort.Slice(samples, func(i, j int) bool { return samples[i].Time.Before(samples[j].Time) })
		var b Breach
		var ok bool
		switch rule.Condition {
		case RuleAbove, RuleBelow:
			b, ok = held(rule, s, samples)
		case RulePercentile:
			b, ok = percentile(rule, s, samples)
		}
		if ok {
			out = append(out, b)
		}
	}
	return out, judged
}

// resolution is the median gap between samples: what each sample covers.
func resolution(samples []results.Sample) time.Duration {
	if len(samples) < 2 {
		return 0
	}
	gaps := make([]float64, 0, len(samples)-1)
	for i := 1; i < len(samples); i++ {
		gaps = append(gaps, float64(samples[i].Time.Sub(samples[i-1].Time)))
	}
	return time.Duration(NearestRank(gaps, 50))
}

// held finds the runs of consecutive samples beyond the threshold that
// cover longer than the rule's duration: the first is the breach, the
// others are counted in its text.
func held(rule Rule, s results.Series, samples []results.Sample) (Breach, bool) {
	res := resolution(samples)
	beyond := func(v float64) bool {
		if rule.Condition == RuleAbove {
			return v > rule.Threshold
		}
		return v < rule.Threshold
	}
	word := map[string]string{RuleAbove: "above", RuleBelow: "below"}[rule.Condition]
	var first Breach
	found := 0
	for i := 0; i < len(samples); {
		if !beyond(samples[i].Value) {
			i++
			continue
		}
		j, peak := i, samples[i].Value
		for j+1 < len(samples) && beyond(samples[j+1].Value) {
			j++
			if (rule.Condition == RuleAbove && samples[j].Value > peak) || (rule.Condition == RuleBelow && samples[j].Value < peak) {
				peak = samples[j].Value
			}
		}
		from, to := samples[i].Time.Add(-res), samples[j].Time
		if covered := to.Sub(from); covered > rule.For {
			found++
			if found == 1 {
				held := ""
				if rule.For > 0 {
					held = fmt.Sprintf(" for %s, longer than %s", covered.Round(100*time.Millisecond), rule.For)
				}
				first = Breach{Rule: rule, Subject: s.Subject, From: from, To: to, Value: peak,
					Text: fmt.Sprintf("validity rule %s: %s[%s] was %s %g %s%s, from %s to %s (%d samples; %s %g %s)",
						rule.Name, s.Name, s.Subject, word, rule.Threshold, s.Unit, held, stamp(from), stamp(to), j-i+1,
						map[string]string{RuleAbove: "peak", RuleBelow: "lowest"}[rule.Condition], round3(peak), s.Unit)}
			}
		}
		i = j + 1
	}
	if found > 1 {
		first.Text += fmt.Sprintf(", and %d more time(s) in the window", found-1)
	}
	return first, found > 0
}

func percentile(rule Rule, s results.Series, samples []results.Sample) (Breach, bool) {
	v := NearestRank(SampleValues(samples), rule.Percentile)
	if v <= rule.Threshold {
		return Breach{}, false
	}
	// The moment: the first sample at or above the percentile's value.
	at := samples[0].Time
	for _, sm := range samples {
		if sm.Value >= v {
			at = sm.Time
			break
		}
	}
	return Breach{Rule: rule, Subject: s.Subject, From: samples[0].Time, To: samples[len(samples)-1].Time, Value: v,
		Text: fmt.Sprintf("validity rule %s: the p%g of %s[%s] over the window was %g %s (%d samples, first reached at %s), above %g %s",
			rule.Name, rule.Percentile, s.Name, s.Subject, round3(v), s.Unit, len(samples), stamp(at), rule.Threshold, s.Unit)}, true
}

// imbalance compares the family's busiest member's mean with the mean of
// the members' means.
func imbalance(rule Rule, subject string, family []results.Series) (Breach, bool) {
	if len(family) < 2 {
		return Breach{}, false
	}
	var sum float64
	busiest, top := "", 0.0
	for _, s := range family {
		m := meanOf(SampleValues(s.Samples))
		sum += m
		if busiest == "" || m > top {
			busiest, top = s.Name, m
		}
	}
	avg := sum / float64(len(family))
	if avg <= 0 || top <= rule.Threshold*avg {
		return Breach{}, false
	}
	first := family[0].Samples
	who, of := busiest+"["+subject+"]", fmt.Sprintf("its %d members", len(family))
	if isRole(subject) {
		who, of = busiest, fmt.Sprintf("the %d %s subjects", len(family), subject)
	}
	return Breach{Rule: rule, Subject: subject, From: first[0].Time, To: first[len(first)-1].Time, Value: top / avg,
		Text: fmt.Sprintf("validity rule %s: %s averaged %g %s, %.2f× the mean of %s (%g), above %g×",
			rule.Name, who, round3(top), family[0].Unit, top/avg, of, round3(avg), rule.Threshold)}, true
}

func meanOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

func stamp(t time.Time) string { return t.UTC().Format("15:04:05.0Z") }

// round3 keeps three significant digits, printed by %g without a tail.
func round3(v float64) float64 {
	out, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return out
}
