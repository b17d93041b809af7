package stats

import (
	"math"
	"testing"
)

// Shift: 5 vs 5 values 1 apart have the shift 1, and an exact interval
// (at 5 vs 5 the 95 % Moses interval drops the 2 most extreme differences
// at each end) that holds it; a side of zeros shifts by the other's median.
func TestShift(t *testing.T) {
	a := []float64{10, 11, 12, 13, 14}
	b := []float64{11, 12, 13, 14, 15}
	est, lo, hi := Shift(a, b, 0.05)
	if est != 1 || lo > 1 || hi < 1 || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		t.Errorf("shift %v [%v, %v]", est, lo, hi)
	}
	if est, lo, _ := Shift([]float64{0, 0, 0, 0, 0}, []float64{2, 3, 4, 5, 6}, 0.05); est != 4 || lo <= 0 {
		t.Errorf("from zeros: %v, low %v", est, lo)
	}
	if est, lo, hi := Shift([]float64{1}, []float64{2}, 0.05); est != 1 || !math.IsInf(lo, -1) || !math.IsInf(hi, 1) {
		t.Errorf("1 vs 1: %v [%v, %v]", est, lo, hi)
	}
}
