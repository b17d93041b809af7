package compare

import (
	"bytes"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/profile"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// profiledRun is a run of one step whose repetitions hold on-CPU profiles
// at 100 Hz over 1,000 transactions: the stacks' samples, noisy by 5 %;
// its functions are the diagnostic items the runner makes of them.
func profiledRun(name string, n int, rng *rand.Rand, stacks map[string]int) Run {
	r := Run{Name: name, Steps: []benchv1.StepStatus{{Name: "clients=8"}}}
	for rep := range n {
		p := &results.Profile{Event: "cpu-clock", FrequencyHz: 100}
		for _, s := range slices.Sorted(maps.Keys(stacks)) { // in one order: the seeded noise lands alike every time
			k := int(math.Round(float64(stacks[s]) * (1 + 0.05*rng.NormFloat64())))
			p.Stacks = append(p.Stacks, results.FoldedStack{Stack: s, Samples: k})
			p.Samples += k
		}
		d := &results.Diagnostics{Source: "postgresql", WindowSeconds: 60, Transactions: 1000, Profile: p, Items: profile.Functions(p)}
		idx := int32(rep + 1)
		r.Steps[0].Repetitions = append(r.Steps[0].Repetitions, benchv1.RepetitionStatus{Index: idx, Verdict: benchv1.VerdictSucceeded})
		r.Measurements = append(r.Measurements, Measurement{Step: "clients=8", Repetition: idx, Result: &results.Result{Diagnostics: d}})
	}
	return r
}

// A candidate whose server runs a new CPU-heavy function (an md5 under the
// aggregate) beside what both run: the flame data pool each side's stacks
// per transaction (100 samples at 100 Hz over 1,000 transactions is 1 ms
// a transaction), the function is the first suspect of its kind,
// confirmed, with its share of the change; the candidate-shaped graph
// draws it red, the baseline-shaped one has no frame of it, and a real
// browser shows both graphs' colours.
func TestDifferentialFlameGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	common := map[string]int{"postgres;main;PostgresMain;ExecScan;heap_getnextslot": 400, "postgres;main;PostgresMain;ExecScan;ExecQual": 200}
	grown := map[string]int{"postgres;main;PostgresMain;ExecAgg;md5_text;pg_md5_hash": 300}
	for k, v := range common {
		grown[k] = v
	}
	base, cand := profiledRun("a", 5, rng, common), profiledRun("b", 5, rng, grown)
	rep, err := Build(Side{Name: "a", Runs: []Run{base}}, Side{Name: "b", Runs: []Run{cand}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Flames) != 1 {
		t.Fatalf("%d flame diffs, want one step's", len(rep.Flames))
	}
	f := rep.Flames[0]
	var md5 FlameStack
	for _, s := range f.Stacks {
		if strings.HasSuffix(s.Stack, "pg_md5_hash") {
			md5 = s
		}
	}
	if md5.Baseline != 0 || math.Abs(float64(md5.Candidate)-3) > 0.2 || f.BaselineRepetitions != 5 || f.CandidateRepetitions != 5 {
		t.Errorf("the md5 stack %+v (want 0 → about 3 ms/tx), repetitions %d and %d", md5, f.BaselineRepetitions, f.CandidateRepetitions)
	}
	var first *Suspect
	for i := range rep.Suspects {
		if rep.Suspects[i].Kind == results.DiagnosticFunction {
			first = &rep.Suspects[i]
			break
		}
	}
	if first == nil || first.Name != "pg_md5_hash" || !first.Confirmed || float64(first.SharePercent) < 90 {
		t.Fatalf("the first function suspect %+v, want pg_md5_hash confirmed with nearly all the change", first)
	}
	grew, shrank := FlameSVG(f, "a", "b", true), FlameSVG(f, "a", "b", false)
	if !strings.Contains(grew, "pg_md5_hash — a 0 ms/tx, b ") || !strings.Contains(grew, `fill="rgb(235,60,60)"`) {
		t.Errorf("the candidate's shape does not draw pg_md5_hash in full red:\n%.600s", grew)
	}
	if strings.Contains(shrank, "pg_md5_hash —") {
		t.Errorf("the baseline's shape has a frame of a function only the candidate ran")
	}
	browser := testutil.NeedEnv(t, "CHROMIUM")
	var page bytes.Buffer
	if err := RenderHTML(&page, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), `class="chart flamegraph"`); n != 2 {
		t.Fatalf("%d flame graphs on the page, want both orientations", n)
	}
	counts := colourCounts(t, browser, page.String(), "1200,2400", map[string][3]uint8{"grew": {235, 60, 60}, "unchanged": {235, 235, 235}})
	t.Logf("flame graph pixels: %v", counts)
	// md5's three frames are half of the candidate's width (300 of 900
	// samples ⇒ a third), 15 pixels high each.
	if counts["grew"] < 3*15*300 || counts["unchanged"] < 15*1000 {
		t.Errorf("the flame graphs' colours on the screenshot: %v", counts)
	}
}
