package stats

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Values near float64's limit overflow the mean; the summary is still
// written, with null where a figure is not finite, and finite figures as
// before.
func TestSummaryOfExtremeValuesIsWritable(t *testing.T) {
	raw, err := json.Marshal(Summarize([]float64{math.MaxFloat64, math.MaxFloat64, 1}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"Mean":null`) || !strings.Contains(string(raw), `"Min":1,`) {
		t.Errorf("%s", raw)
	}
	type plain Summary // the default encoding, as before
	s := Summarize([]float64{1, 2})
	want, _ := json.Marshal(plain(s))
	if raw, err = json.Marshal(s); err != nil || string(raw) != string(want) {
		t.Errorf("%s %v, want %s", raw, err, want)
	}
}
