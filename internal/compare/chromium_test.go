package compare

import (
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := RenderHTML(f, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	shot := filepath.Join(dir, "report.png")
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1000,2400", "--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	raw, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	img, err := png.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	// Pixels of the baseline's and the candidate's bar colours.
	// The stall band: #d33 at 18 % over white.
	want := map[string][3]uint8{"baseline": {0x5b, 0x6f, 0x82}, "candidate": {0xe0, 0x7b, 0x39}, "stall": {247, 218, 218}}
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

func near8(img image.Image, x, y int, c [3]uint8) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	d := func(a uint32, b uint8) bool { v := int(a>>8) - int(b); return v > -6 && v < 6 }
	return d(r, c[0]) && d(g, c[1]) && d(b, c[2])
}
