package stats

import (
	"encoding/json"
	"math"
	"sort"
)

// Summary summarises one metric over repetitions.
type Summary struct {
	N      int
	Median float64
	Mean   float64
	Min    float64
	Max    float64
	// StdDev is the sample standard deviation (n-1); zero below two values.
	StdDev float64
	// CILow and CIHigh bound the 95 % interval of the mean, using Student's t
	// with n-1 degrees of freedom; HasCI is false below two values.
	CILow, CIHigh float64
	HasCI         bool
	// CVPercent is StdDev over |Mean| in percent; zero when Mean is zero.
	CVPercent float64
}

// Summarize computes the Summary of values. It does not modify values.
func Summarize(values []float64) Summary {
	n := len(values)
	if n == 0 {
		return Summary{}
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	st := Summary{N: n, Min: s[0], Max: s[n-1]}
	if n%2 == 1 {
		st.Median = s[n/2]
	} else {
		st.Median = (s[n/2-1] + s[n/2]) / 2
	}
	var sum float64
	for _, v := range s {
		sum += v
	}
	st.Mean = sum / float64(n)
	if n < 2 {
		return st
	}
	var ss float64
	for _, v := range s {
		d := v - st.Mean
		ss += d * d
	}
	st.StdDev = math.Sqrt(ss / float64(n-1))
	half := TQuantile975(n-1) * st.StdDev / math.Sqrt(float64(n))
	st.CILow, st.CIHigh, st.HasCI = st.Mean-half, st.Mean+half, true
	if st.Mean != 0 {
		st.CVPercent = 100 * st.StdDev / math.Abs(st.Mean)
	}
	return st
}

// tTable holds the 0.975 quantile of Student's t for 1..30 degrees of freedom.
var tTable = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

// TQuantile975 returns the two-sided 95 % critical value of Student's t.
// Beyond the table it uses the Cornish-Fisher expansion around the normal
// quantile, which is accurate to 1e-3 from 30 degrees of freedom on.
func TQuantile975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	if df <= len(tTable) {
		return tTable[df-1]
	}
	const z = 1.959963984540054
	v := float64(df)
	return z + (z*z*z+z)/(4*v) + (5*math.Pow(z, 5)+16*z*z*z+3*z)/(96*v*v)
}

// MarshalJSON writes a figure that is not finite as null, which JSON can
// hold: values near float64's limits (a tool's summary, kept as printed)
// overflow a sum or a square, and one +Inf in a comparison's report made
// the whole report unwritable (found by the fuzz test).
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		N                                             int
		Median, Mean, Min, Max, StdDev, CILow, CIHigh orNull
		HasCI                                         bool
		CVPercent                                     orNull
	}{s.N, orNull(s.Median), orNull(s.Mean), orNull(s.Min), orNull(s.Max), orNull(s.StdDev),
		orNull(s.CILow), orNull(s.CIHigh), s.HasCI, orNull(s.CVPercent)})
}

// orNull is a float written as null when it is not finite.
type orNull float64

func (f orNull) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}
