package results

import (
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// A log in the V2 encoding that hdrhistogram-go and HdrHistogram 2.1.5 and
// later write ("HISTFAAA…", base64 of the compressed bytes): every
// interval is read and merged.
func TestReadHistogramLogInTheV2Encoding(t *testing.T) {
	var log []byte
	for i, values := range [][]int64{{100, 200, 300}, {400, 5000}} {
		h := hdr.New(1, 60_000_000, 3)
		for _, v := range values {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, []byte("#[StartTime: 0.000 (seconds since epoch)]\n")...)
		log = append(log, []byte(string(rune('0'+i))+".000,1.000,5.000,"+string(enc)+"\n")...)
	}
	h, intervals, err := ReadHistogramLog(log)
	if err != nil {
		t.Fatal(err)
	}
	if intervals != 2 || h.TotalCount() != 5 || h.Max() < 4995 || h.Max() > 5005 || h.Min() != 100 {
		t.Errorf("%d intervals, %d values from %d to %d, want 2 intervals of 5 values from 100 to 5000", intervals, h.TotalCount(), h.Min(), h.Max())
	}
}
