package sprt

import (
	"fmt"
	"math"
)

// This file is the generalized log-likelihood ratio of Fishtest's LLRcalc.
// Every sum runs left to right in bucket order, as Python's sum() does, so
// that rounding matches the reference and not only the mathematics.

// neloDividedByNT converts a t-value (normalized score) to normalized Elo.
var neloDividedByNT = 800 / math.Ln10

// regularizeEpsilon replaces a zero count before any computation: it keeps
// every logarithm finite and every MLE inside the simplex.
const regularizeEpsilon = 1e-3

// atom is one support point of a discrete distribution.
type atom struct{ value, prob float64 }

// pdf is a discrete distribution with strictly ascending values.
type pdf []atom

// regularize returns counts as floats with every zero replaced by 1e-3.
func regularize(counts []int64) []float64 {
	out := make([]float64, len(counts))
	for i, n := range counts {
		if n == 0 {
			out[i] = regularizeEpsilon
		} else {
			out[i] = float64(n)
		}
	}
	return out
}

// resultsToPDF is Fishtest's results_to_pdf: value i/(k-1) (the mean score of
// a game or of a pair) with the empirical frequency of bucket i.
func resultsToPDF(counts []int64) (float64, pdf) {
	reg := regularize(counts)
	var n float64
	for _, c := range reg {
		n += c
	}
	k := len(reg)
	out := make(pdf, k)
	for i, c := range reg {
		out[i] = atom{float64(i) / float64(k-1), c / n}
	}
	return n, out
}

// meanVar returns the expectation and variance of d.
func (d pdf) meanVar() (mean, variance float64) {
	for _, a := range d {
		mean += a.prob * a.value
	}
	for _, a := range d {
		dv := a.value - mean
		variance += a.prob * dv * dv
	}
	return mean, variance
}

// moments returns mean, variance, skewness and excess kurtosis of d.
func (d pdf) moments() (mean, variance, skewness, exkurt float64) {
	mean, variance = d.meanVar()
	var m3, m4 float64
	for _, a := range d {
		dv := a.value - mean
		m3 += a.prob * dv * dv * dv
	}
	for _, a := range d {
		dv := a.value - mean
		m4 += a.prob * dv * dv * dv * dv
	}
	skewness = m3 / math.Pow(variance, 1.5)
	exkurt = m4/(variance*variance) - 3
	return mean, variance, skewness, exkurt
}

// secular solves Σ p_i a_i / (1 + x a_i) = 0 on the interval where every
// 1 + x a_i stays positive, shrunk by 1e-9 at both ends as Fishtest does.
func secular(d pdf) (float64, error) {
	lo, hi := d[0].value, d[0].value
	for _, a := range d {
		lo = math.Min(lo, a.value)
		hi = math.Max(hi, a.value)
	}
	if !(lo*hi < 0) {
		return 0, fmt.Errorf("secular equation: support [%g, %g] does not straddle zero (the hypothesis lies outside the possible scores)", lo, hi)
	}
	const epsilon = 1e-9
	lower := -1 / hi
	upper := -1 / lo
	f := func(x float64) float64 {
		var s float64
		for _, a := range d {
			s += a.prob * a.value / (1 + x*a.value)
		}
		return s
	}
	x, converged, err := brentq(f, lower+epsilon, upper-epsilon)
	if err != nil {
		return 0, fmt.Errorf("secular equation: %w", err)
	}
	if !converged {
		return 0, fmt.Errorf("secular equation: %w", errNotConverged)
	}
	return x, nil
}

// mleExpected is the maximum-likelihood distribution on the support of phat
// whose expectation is s (Fishtest's MLE_expected).
func mleExpected(phat pdf, s float64) (pdf, error) {
	shifted := make(pdf, len(phat))
	for i, a := range phat {
		shifted[i] = atom{a.value - s, a.prob}
	}
	x, err := secular(shifted)
	if err != nil {
		return nil, err
	}
	out := make(pdf, len(phat))
	for i, a := range phat {
		out[i] = atom{a.value, a.prob / (1 + x*(a.value-s))}
	}
	if got, _ := out.meanVar(); !(math.Abs(s-got) < 1e-6) {
		return nil, fmt.Errorf("MLE for expected score %g missed it (got %g)", s, got)
	}
	return out, nil
}

// mleTValue is the maximum-likelihood distribution on the support of phat
// whose t-value (mu-ref)/sigma is t (Fishtest's MLE_t_value): ten fixed-point
// rounds of a secular equation, stopping early once no probability moves by
// 1e-9.
func mleTValue(phat pdf, ref, t float64) (pdf, error) {
	n := len(phat)
	mle := make(pdf, n)
	for i, a := range phat {
		mle[i] = atom{a.value, 1 / float64(n)}
	}
	shifted := make(pdf, n)
	for range 10 {
		prev := mle
		mu, variance := prev.meanVar()
		sigma := math.Sqrt(variance)
		for i, a := range phat {
			z := (mu - a.value) / sigma
			shifted[i] = atom{a.value - ref - t*sigma*(1+z*z)/2, a.prob}
		}
		x, err := secular(shifted)
		if err != nil {
			return nil, err
		}
		mle = make(pdf, n)
		for i, a := range phat {
			mle[i] = atom{a.value, a.prob / (1 + x*shifted[i].value)}
		}
		var maxDiff float64
		for i := range mle {
			maxDiff = math.Max(maxDiff, math.Abs(prev[i].prob-mle[i].prob))
		}
		if maxDiff < 1e-9 {
			break
		}
	}
	mu, variance := mle.meanVar()
	if got := (mu - ref) / math.Sqrt(variance); !(math.Abs(t-got) < 1e-5) {
		return nil, fmt.Errorf("MLE for t-value %g missed it (got %g)", t, got)
	}
	return mle, nil
}

// llrPerSample is Fishtest's LLR(): Σ p̂_i ln(p1_i/p0_i) where p0, p1 are the
// MLEs under the two hypotheses.
func llrPerSample(phat, pdf0, pdf1 pdf) float64 {
	var s float64
	for i, a := range phat {
		s += a.prob * (math.Log(pdf1[i].prob) - math.Log(pdf0[i].prob))
	}
	return s
}

// logisticScore is Fishtest's L_: the expected score at a logistic Elo.
func logisticScore(elo float64) float64 {
	return 1 / (1 + math.Pow(10, -elo/400))
}

// LLRLogistic is the generalized LLR of H1: elo=elo1 against H0: elo=elo0 in
// logistic Elo, for [L,D,W] game counts or a 5-bucket pentanomial.
func LLRLogistic(elo0, elo1 float64, counts []int64) (float64, error) {
	if err := checkCounts(counts); err != nil {
		return 0, err
	}
	n, phat := resultsToPDF(counts)
	pdf0, err := mleExpected(phat, logisticScore(elo0))
	if err != nil {
		return 0, fmt.Errorf("H0 (elo %g): %w", elo0, err)
	}
	pdf1, err := mleExpected(phat, logisticScore(elo1))
	if err != nil {
		return 0, fmt.Errorf("H1 (elo %g): %w", elo1, err)
	}
	return n * llrPerSample(phat, pdf0, pdf1), nil
}

// LLRNormalized is the generalized LLR of H1: nElo=nelo1 against H0:
// nElo=nelo0 in normalized Elo. For a pentanomial the t-value of the pair
// average is √2 times the per-game one.
func LLRNormalized(nelo0, nelo1 float64, counts []int64) (float64, error) {
	if err := checkCounts(counts); err != nil {
		return 0, err
	}
	t0, t1 := nelo0/neloDividedByNT, nelo1/neloDividedByNT
	if len(counts) == 5 {
		t0, t1 = t0*math.Sqrt2, t1*math.Sqrt2
	}
	n, phat := resultsToPDF(counts)
	pdf0, err := mleTValue(phat, 0.5, t0)
	if err != nil {
		return 0, fmt.Errorf("H0 (nelo %g): %w", nelo0, err)
	}
	pdf1, err := mleTValue(phat, 0.5, t1)
	if err != nil {
		return 0, fmt.Errorf("H1 (nelo %g): %w", nelo1, err)
	}
	return n * llrPerSample(phat, pdf0, pdf1), nil
}

// llrBrownianAlt2 is Fishtest's LLR_drift_variance_alt2 drift times N: the
// Brownian (GSPRT) approximation N·(s1−s0)(2ŝ−s0−s1)/(2σ̂²). It is what the
// Elo estimate's Brownian model uses as the observed LLR.
func llrBrownianAlt2(s0, s1 float64, counts []int64) float64 {
	n, phat := resultsToPDF(counts)
	mu, variance := phat.meanVar()
	return n * driftAlt2(mu, variance, s0, s1)
}

// driftAlt2 is the per-sample LLR drift of the Brownian approximation when
// the true score is s and the per-sample variance is variance.
func driftAlt2(s, variance, s0, s1 float64) float64 {
	return (s - (s0+s1)/2) * (s1 - s0) / variance
}

// llrNormalizedAlt is Fishtest's LLR_normalized_alt, the closed-form
// approximation (games/2)·ln((1+(t−t0)²)/(1+(t−t1)²)).
func llrNormalizedAlt(nelo0, nelo1 float64, counts []int64) float64 {
	n, phat := resultsToPDF(counts)
	mu, variance := phat.meanVar()
	sigmaPerGame, games := math.Sqrt(variance), n
	if len(counts) == 5 {
		sigmaPerGame, games = math.Sqrt(2*variance), 2*n
	}
	nt0, nt1 := nelo0/neloDividedByNT, nelo1/neloDividedByNT
	nt := (mu - 0.5) / sigmaPerGame
	return games / 2 * math.Log((1+(nt-nt0)*(nt-nt0))/(1+(nt-nt1)*(nt-nt1)))
}

// checkCounts accepts [L,D,W] or a pentanomial of non-negative counts.
func checkCounts(counts []int64) error {
	if len(counts) != 3 && len(counts) != 5 {
		return fmt.Errorf("need 3 counts (L,D,W) or 5 (pentanomial), got %d", len(counts))
	}
	for i, c := range counts {
		if c < 0 {
			return fmt.Errorf("count %d is negative (%d)", i, c)
		}
	}
	return nil
}
