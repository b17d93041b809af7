package stats

import "math"

// WelchT is Welch's unequal-variance t-test of a against b: the statistic,
// its degrees of freedom and the two-sided p-value.
func WelchT(a, b []float64) (t, df, p float64) {
	sa, sb := Summarize(a), Summarize(b)
	if sa.N < 2 || sb.N < 2 {
		return 0, 0, 1
	}
	va, vb := sa.StdDev*sa.StdDev/float64(sa.N), sb.StdDev*sb.StdDev/float64(sb.N)
	se := math.Sqrt(va + vb)
	if se == 0 {
		if sa.Mean == sb.Mean {
			return 0, float64(sa.N + sb.N - 2), 1
		}
		return math.Inf(1), float64(sa.N + sb.N - 2), 0
	}
	t = (sa.Mean - sb.Mean) / se
	df = (va + vb) * (va + vb) / (va*va/float64(sa.N-1) + vb*vb/float64(sb.N-1))
	return t, df, StudentTwoSided(t, df)
}

// StudentTwoSided is the two-sided p-value of Student's t: P(|T| ≥ |t|)
// with df degrees of freedom, the regularized incomplete beta
// I_{df/(df+t²)}(df/2, 1/2). It is 1 at t = 0 and 0 at an infinite t.
func StudentTwoSided(t, df float64) float64 {
	if math.IsInf(t, 0) {
		return 0
	}
	x := df / (df + t*t)
	return regIncBeta(df/2, 0.5, x)
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by the
// continued fraction of Lentz's method (converges fast for x < (a+1)/(a+b+2),
// the symmetry relation covers the rest).
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	lbeta := lgamma(a+b) - lgamma(a) - lgamma(b)
	front := math.Exp(lbeta + a*math.Log(x) + b*math.Log(1-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaCF(b, a, 1-x)/b
	}
	return front * betaCF(a, b, x) / a
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	nonzero := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/nonzero(1-(a+b)*x/(a+1))
	h := d
	// One step of the modified Lentz method for the coefficient num; it
	// returns the factor the fraction's value changes by.
	step := func(num float64) float64 {
		d = 1 / nonzero(1+num*d)
		c = nonzero(1 + num/c)
		return d * c
	}
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		h *= step(fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)))
		del := step(-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)))
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
