package compare

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/capacity"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The HTML report, rendered by a real browser (headless Chromium, from
// Debian) to a PNG, shows its charts: the bars of both variants are on the
// page in their colours. CHROMIUM names the browser (hack/test.sh sets it).
func TestHTMLReportRendersInChromium(t *testing.T) {
	browser := testutil.NeedEnv(t, "CHROMIUM") // Debian's chromium
	base, cand := stalledSides()
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := RenderHTML(&page, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	// Pixels of the baseline's and the candidate's bar colours.
	// The stall band: #d33 at 18 % over white.
	want := map[string][3]uint8{"baseline": {0x5b, 0x6f, 0x82}, "candidate": {0xe0, 0x7b, 0x39}, "stall": {247, 218, 218}}
	counts := colourCounts(t, browser, page.String(), "1000,2400", want)
	// Two throughput bars and five latency bars per variant, each at least
	// a few hundred pixels: anything less means the SVG did not render.
	// Three seconds of sixty on a 680-pixel axis, 190 pixels high.
	if counts["stall"] < 1000 {
		t.Errorf("the stall band: %d pixels of its colour, want it drawn (≥ 1000)", counts["stall"])
	}
	delete(want, "stall")
	for name := range want {
		if counts[name] < 2000 {
			t.Errorf("%s bars: %d pixels of their colour in the screenshot, want the charts drawn (≥ 2000)", name, counts[name])
		}
	}
	t.Logf("bar pixels: %v", counts)
}

// colourCounts renders page in headless Chromium at size ("W,H") and
// counts the pixels of each colour of want on the screenshot
// (DBPERF_KEEP_SCREENSHOT names a file to keep it in).
func colourCounts(t *testing.T, browser, page, size string, want map[string][3]uint8) map[string]int {
	t.Helper()
	dir := t.TempDir()
	file, shot := filepath.Join(dir, "page.html"), filepath.Join(dir, "page.png")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size="+size, "--screenshot="+shot, "file://"+file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("DBPERF_KEEP_SCREENSHOT"); keep != "" {
		_ = os.WriteFile(keep, raw, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			for name, c := range want {
				if near8(img, x, y, c) {
					counts[name]++
				}
			}
		}
	}
	return counts
}

func near8(img image.Image, x, y int, c [3]uint8) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	d := func(a uint32, b uint8) bool { v := int(a>>8) - int(b); return v > -6 && v < 6 }
	return d(r, c[0]) && d(g, c[1]) && d(b, c[2])
}

// kneeSide is searches of a server that keeps up to limit (each search's
// limit a little off, as repeated searches are): the real search (×2 from
// 400, bisected to 5 %) judges a level passed at or below its limit, with
// throughput the level up to it and latency growing past it.
func kneeSide(t *testing.T, name string, limits ...int32) Side {
	t.Helper()
	s := Side{Name: name}
	plan := capacity.PlanOf(&benchv1.CapacitySpec{Parameter: "rate", Search: &benchv1.CapacitySearch{Start: 400, FactorPercent: 200, WidthPercent: 5}})
	for i, limit := range limits {
		cs := &benchv1.CapacityStatus{Parameter: "rate"}
		var judged []capacity.Level
		for range 20 {
			d := capacity.Decide(plan, judged, false)
			if d.Done {
				cs.Maximum, cs.StopReason = d.Maximum, d.Reason
				break
			}
			passed := d.Next <= limit
			tput := 0.98 * float64(min(d.Next, limit))
			lat := 4 + 16*float64(d.Next)/float64(limit)
			if !passed {
				lat = 20 + 200*float64(d.Next-limit)/float64(limit)
			}
			cs.Levels = append(cs.Levels, benchv1.CapacityLevel{Value: d.Next, Step: fmt.Sprintf("rate=%d", d.Next), Passed: &passed, Throughput: &tput, LatencyMillis: &lat})
			judged = append(judged, capacity.Level{Value: d.Next, Passed: passed})
		}
		cs.Throughput = &benchv1.MetricValue{Name: "transactionsPerSecond", Value: 0.98 * float64(*cs.Maximum), Unit: "tx/s", Direction: benchv1.HigherIsBetter}
		s.Runs = append(s.Runs, capacityRunOf(fmt.Sprintf("%s-%d", name, i), cs))
	}
	return s
}

// The comparison of two platforms' capacity searches draws both knee
// curves (throughput and latency against the level), rendered by a real
// browser: each variant's lines are on the page in its colour.
func TestCapacityCurvesRenderInChromium(t *testing.T) {
	browser := testutil.NeedEnv(t, "CHROMIUM")
	rep, err := Build(kneeSide(t, "v3", 1650, 1600, 1700), kneeSide(t, "v4a", 2150, 2100, 2200), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Curves) != 6 || rep.Curves[0].Variant != "v3" || rep.Curves[5].Variant != "v4a" || len(rep.Curves[0].Points) < 5 {
		t.Fatalf("curves %+v", rep.Curves)
	}
	var page bytes.Buffer
	if err := RenderHTML(&page, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "Capacity: the knee curves") || strings.Count(page.String(), "<polyline") != 12 {
		t.Fatalf("the page has %d curve lines, want 12 (3 searches × 2 variants × 2 charts)", strings.Count(page.String(), "<polyline"))
	}
	// The curves alone on a page, so that the maximum's bars, in the same
	// colours, do not count.
	body := "<!doctype html><html><body>"
	for _, c := range curveCharts([]*Report{rep}) {
		body += string(c)
	}
	want := map[string][3]uint8{"v3": {0x5b, 0x6f, 0x82}, "v4a": {0xe0, 0x7b, 0x39}}
	counts := colourCounts(t, browser, body+"</body></html>", "800,720", want)
	// Three lines of 3 px across most of a 660-px axis, twice, and the dots.
	for name := range want {
		if counts[name] < 3000 {
			t.Errorf("%s: %d pixels of its colour, want its curves drawn (≥ 3000)", name, counts[name])
		}
	}
	t.Logf("curve pixels: %v", counts)
}
