package compare

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// withServerSide adds to every measurement of the runs what telemetry
// recorded: the target's CPU (cores per 1000 tx/s given by costPerK), the
// efficiency, and a few figures of the server's own statistics.
func withServerSide(side Side, costPerK float64) Side {
	for ri := range side.Runs {
		for si := range side.Runs[ri].Steps {
			for pi := range side.Runs[ri].Steps[si].Repetitions {
				rep := &side.Runs[ri].Steps[si].Repetitions[pi]
				tps := rep.Metrics[0].Value
				cpu := tps / 1000 * costPerK * (1 + 0.01*float64(ri%3))
				rep.Metrics = append(rep.Metrics,
					benchv1.MetricValue{Name: "efficiencyPerTargetCore", Operation: "target", Value: tps / cpu, Unit: "tx/s per core", Direction: benchv1.HigherIsBetter, Source: "kubelet"},
					benchv1.MetricValue{Name: "cpuCores", Operation: "target", Value: cpu, Unit: "cores", Direction: benchv1.Neutral, Source: "kubelet"},
					benchv1.MetricValue{Name: "commitsPerSecond", Operation: "server", Value: tps * 1.001, Unit: "tx/s", Direction: benchv1.Neutral, Source: "postgresql"},
					benchv1.MetricValue{Name: "sessionsActiveMean", Operation: "server", Value: 18 + float64(ri), Unit: "sessions", Direction: benchv1.Neutral, Source: "postgresql"},
					benchv1.MetricValue{Name: "serverRestarts", Operation: "server", Value: 0, Unit: "count", Direction: benchv1.LowerIsBetter, Source: "postgresql"},
				)
			}
		}
	}
	return side
}

// TestServersSideBesideThroughput: the target's CPU change stands beside
// the throughput's on the primary rows (table, Markdown, CSV, HTML); the
// servers' side is described but takes no part in the family of tests (so
// the tool's metrics keep their adjusted p-values whatever telemetry
// recorded), except the efficiency, which is judged like a tool's metric.
func TestServersSideBesideThroughput(t *testing.T) {
	base0, cand0 := sides()
	plain, err := Build(base0, cand0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	base, cand := sides()
	// v4a: more throughput for less CPU per transaction.
	rep, err := Build(withServerSide(base, 2.0), withServerSide(cand, 1.2), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]Row{}
	for _, r := range rep.Rows {
		rows[r.Step+" "+metricName(r)] = r
	}
	for _, p := range plain.Rows {
		if got := rows[p.Step+" "+metricName(p)]; got.PAdjusted != p.PAdjusted || got.Verdict != p.Verdict {
			t.Errorf("%s %s: adjusted p %v (%s) with telemetry, %v (%s) without: telemetry must not join the family",
				p.Step, metricName(p), got.PAdjusted, got.Verdict, p.PAdjusted, p.Verdict)
		}
	}
	tps, cpu := rows["clients=20 transactionsPerSecond"], rows["clients=20 cpuCores target"]
	if tps.TargetCPUDeltaPercent == nil || float64(*tps.TargetCPUDeltaPercent) != float64(cpu.DeltaPercent) {
		t.Fatalf("the throughput row does not carry the target CPU change: %+v vs %+v", tps.TargetCPUDeltaPercent, cpu.DeltaPercent)
	}
	t.Logf("clients=20: throughput %+.1f %%, target CPU %+.1f %%", float64(tps.DeltaPercent), float64(cpu.DeltaPercent))
	if cpu.Source != "kubelet" || cpu.Direction != stats.Neutral || float64(cpu.DeltaPercent) < 20 {
		t.Errorf("target CPU row %+v", cpu)
	}
	if c := rows["clients=20 commitsPerSecond server"]; c.PAdjusted != c.P {
		t.Errorf("a figure of the server's statistics was adjusted with the family: p %v, adjusted %v", c.P, c.PAdjusted)
	}
	if rep.Better+rep.Worse+rep.NoChange+rep.Inconclusive != plain.Better+plain.Worse+plain.NoChange+plain.Inconclusive+2 {
		t.Errorf("counts %d/%d/%d/%d: only the two efficiency rows may join the tool's %d/%d/%d/%d",
			rep.Better, rep.Worse, rep.NoChange, rep.Inconclusive, plain.Better, plain.Worse, plain.NoChange, plain.Inconclusive)
	}
	if e := rows["clients=20 efficiencyPerTargetCore target"]; e.Verdict != stats.Better || e.Direction != stats.HigherIsBetter {
		t.Errorf("efficiency %+v: 1.67x the throughput per core must be Better", e)
	}

	var table, md, csvOut, html bytes.Buffer
	for format, buf := range map[string]*bytes.Buffer{"table": &table, "markdown": &md, "csv": &csvOut, "html": &html} {
		if err := Render(buf, rep, format); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(table.String(), "TARGET CPU Δ %") || !strings.Contains(md.String(), "Target CPU Δ %") ||
		!strings.Contains(csvOut.String(), "target_cpu_delta_percent") || !strings.Contains(html.String(), "<th>Target CPU Δ %</th>") {
		t.Errorf("a rendering lacks the target CPU column:\n%s\n%s", table.String(), md.String())
	}
	if !strings.Contains(html.String(), "target CPU per step") || strings.Count(html.String(), `class="chart half"`) != 3 {
		t.Errorf("the HTML report does not draw throughput, target CPU and efficiency side by side")
	}
	var plainTable bytes.Buffer
	_ = Render(&plainTable, plain, "table")
	if strings.Contains(plainTable.String(), "TARGET CPU") {
		t.Error("a comparison without telemetry shows an empty target CPU column")
	}

	// Chromium draws the three half charts: each holds bars of both
	// variants, in the top band of the page where they stand side by side.
	browser := os.Getenv("CHROMIUM")
	if browser == "" {
		t.Log("CHROMIUM not set: the rendering in a browser is checked by hack/test.sh's run")
		return
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	if d := os.Getenv("DBPERF_KEEP_SHOT"); d != "" {
		shot = filepath.Join(d, "report.png")
	}
	if out, err := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1000,1400", "--screenshot="+shot, "file://"+page).CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Candidate-coloured pixels in the left and the right half of the
	// first charts' band (150 px from the first such pixel: where the
	// summary above ends depends on its lines): the throughput chart and
	// the CPU chart beside it.
	b := img.Bounds()
	top := b.Max.Y
	for y := b.Min.Y; y < b.Max.Y && top == b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if near8(img, x, y, [3]uint8{0xe0, 0x7b, 0x39}) {
				top = y
				break
			}
		}
	}
	halves := [2]int{}
	for y := top; y < min(top+150, b.Max.Y); y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if near8(img, x, y, [3]uint8{0xe0, 0x7b, 0x39}) {
				halves[int(math.Min(1, float64(2*(x-b.Min.X)/b.Dx())))]++
			}
		}
	}
	t.Logf("candidate bar pixels in the first band: left %d, right %d", halves[0], halves[1])
	if halves[0] < 300 || halves[1] < 300 {
		t.Errorf("throughput and target CPU are not drawn side by side: %v candidate pixels left/right", halves)
	}
}
