package telemetry

import (
	"fmt"
	"strings"
)

// DefaultSeriesBudget bounds the samples of one source's series of one
// measurement: 5-second series of a host or node with 8 cores, 2 disks and
// 2 interfaces keep their resolution for about 20 minutes; a 64-core
// node's per-core series are coarsened first.
const DefaultSeriesBudget = 6000

// IsMember says whether a series is about one member of its subject (a
// core, a device, an interface: a name with a part, "cpuBusyPercent.cpu3")
// rather than the subject as a whole.
func IsMember(s Series) bool { return strings.Contains(s.Name, ".") }

// Coarsen halves the resolution of the report's series, those of members
// first (while any member's is longer than one sample), until their
// samples fit the budget (0: DefaultSeriesBudget): each pair of samples
// becomes their mean at the later instant, the end of the interval both
// cover. The window's figures are untouched (they were computed before,
// from every reading). It warns saying by how much, and returns the
// largest factor applied.
func (r *Report) Coarsen(budget int, what string) int {
	if budget <= 0 {
		budget = DefaultSeriesBudget
	}
	total := func() int {
		n := 0
		for _, s := range r.Series {
			n += len(s.Samples)
		}
		return n
	}
	factor := make([]int, len(r.Series))
	for i := range factor {
		factor[i] = 1
	}
	for total() > budget {
		members := false
		for _, s := range r.Series {
			if IsMember(s) && len(s.Samples) > 1 {
				members = true
				break
			}
		}
		changed := false
		for i := range r.Series {
			if (members && !IsMember(r.Series[i])) || len(r.Series[i].Samples) < 2 {
				continue
			}
			r.Series[i].Samples = halve(r.Series[i].Samples)
			factor[i] *= 2
			changed = true
		}
		if !changed {
			break
		}
	}
	most := 1
	for _, f := range factor {
		most = max(most, f)
	}
	if most > 1 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: its series were coarsened up to %d× (each sample the mean of up to %d readings; cores', devices' and interfaces' first) to keep within %d samples",
			what, most, most, budget))
	}
	return most
}

// halve merges each pair of samples into their mean at the later instant;
// an odd last sample stays.
func halve(samples []Sample) []Sample {
	out := make([]Sample, 0, (len(samples)+1)/2)
	for i := 0; i+1 < len(samples); i += 2 {
		out = append(out, Sample{Time: samples[i+1].Time, Value: (samples[i].Value + samples[i+1].Value) / 2})
	}
	if len(samples)%2 == 1 {
		out = append(out, samples[len(samples)-1])
	}
	return out
}
