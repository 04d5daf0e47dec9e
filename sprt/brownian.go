package sprt

import "math"

// brownian is a Brownian motion with drift mu and volatility sigma started at
// 0 and absorbed at a < 0 < b: the continuous model of an SPRT's LLR path
// that Fishtest's Elo estimate inverts (Fishtest's brownian.Brownian).
type brownian struct {
	a, b, mu, sigma2 float64
}

// maxSeriesTerms only guards against a runaway loop; the series converges in
// a handful of terms whenever outcomeCDF picks it.
const maxSeriesTerms = 1_000_000

// outcomeCDF is the probability that the path passes to the right of (T, y):
// stops at a after time T or at b, or is still running at T above y. The
// exact series is slow when the variance accumulated by T is small or the
// drift is large, and Siegmund's approximation takes over there, with the
// same switch as Fishtest.
func (w brownian) outcomeCDF(T, y float64) float64 {
	gamma := w.mu / w.sigma2
	A := w.b - w.a
	if w.sigma2*T/(A*A) < 1e-2 || math.Abs(gamma*A) > 15 {
		return w.outcomeCDFSiegmund(T, y)
	}
	return w.outcomeCDFSeries(T, y)
}

// seriesU is a primitive of e^(γy)·sin(nπy/A), times (2/A)·e^(−γy).
func seriesU(n, gamma, A, y float64) float64 {
	return (2*A*gamma*math.Sin(math.Pi*n*y/A) - 2*math.Pi*n*math.Cos(math.Pi*n*y/A)) /
		(A*A*gamma*gamma + math.Pi*math.Pi*n*n)
}

// outcomeCDFSeries is the exact eigenfunction expansion (Fishtest's
// outcome_cdf_alt1).
func (w brownian) outcomeCDFSeries(T, y float64) float64 {
	mu, sigma2 := w.mu, w.sigma2
	A := w.b - w.a
	x := 0 - w.a
	y -= w.a
	gamma := mu / sigma2
	lambda1 := (math.Pi/A)*(math.Pi/A)*sigma2/2 + (mu*mu/sigma2)/2
	t0 := math.Exp(-lambda1*T - x*gamma + y*gamma)
	var s float64
	for n := 1.0; n <= maxSeriesTerms; n++ {
		lambdaN := (n*math.Pi/A)*(n*math.Pi/A)*sigma2/2 + (mu*mu/sigma2)/2
		t1 := math.Exp(-(lambdaN - lambda1) * T)
		t3 := seriesU(n, gamma, A, y)
		t4 := math.Sin(n * math.Pi * x / A)
		s += t1 * t3 * t4
		if math.Abs(t0*t1*t3) <= 1e-9 {
			break
		}
	}
	var pre float64
	switch {
	case gamma*A > 30: // exp would overflow
		pre = math.Exp(-2 * gamma * x)
	case math.Abs(gamma*A) < 1e-8: // driftless limit, avoids 0/0
		pre = (A - x) / A
	default:
		pre = (1 - math.Exp(2*gamma*(A-x))) / (1 - math.Exp(2*gamma*A))
	}
	return pre + t0*s
}

// outcomeCDFSiegmund is Siegmund's approximation (Fishtest's
// outcome_cdf_alt2), with the asymptotic expansion of Φ where exp(2γa)·Φ(z)
// would be ∞·0.
func (w brownian) outcomeCDFSiegmund(T, y float64) float64 {
	denom := math.Sqrt(T * w.sigma2)
	offset := w.mu * T
	gamma := w.mu / w.sigma2
	a, b := w.a, w.b
	z := (y - offset) / denom
	za := (-y + offset + 2*a) / denom
	zb := (y - offset - 2*b) / denom
	t1 := normalCDF(z)
	var t2, t3 float64
	if gamma*a >= 5 {
		t2 = -math.Exp(-(za*za)/2+2*gamma*a) / math.Sqrt(2*math.Pi) * (1/za - 1/(za*za*za))
	} else {
		t2 = math.Exp(2*gamma*a) * normalCDF(za)
	}
	if gamma*b >= 5 {
		t3 = -math.Exp(-(zb*zb)/2+2*gamma*b) / math.Sqrt(2*math.Pi) * (1/zb - 1/(zb*zb*zb))
	} else {
		t3 = math.Exp(2*gamma*b) * normalCDF(zb)
	}
	return t1 + t2 - t3
}
