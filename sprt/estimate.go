package sprt

import (
	"fmt"
	"math"
)

// The sequential Elo estimate (Fishtest's class sprt and SPRT_elo). A test
// that stops early is biased: it stops when the LLR path happened to run
// fast. The estimate models the LLR as a Brownian motion absorbed at the
// bounds and reports the Elo at which the observed outcome is the median
// (median-unbiased), with the 2.5% and 97.5% crossings as a 95% interval
// and LOS as the probability of a worse outcome at Elo 0.

// Search window and grid of the confidence-bound scan, in logistic Elo.
// outcomeProb falls with Elo only while the GSPRT approximation holds; far
// outside [elo0, elo1] it dips and rises again, so the scan takes the
// leftmost descending crossing on a 10 Elo grid (narrower than the falling
// region for any real sample) and refines it with brentq.
const (
	confidenceClamp = 1000.0
	confidenceStep  = 10.0
)

// EloEstimate is the sequential-test Elo estimate in logistic Elo (for
// every model), each figure clamped to ±1000.
type EloEstimate struct {
	Elo  float64    `json:"elo"`
	CI95 [2]float64 `json:"ci95"`
	LOS  float64    `json:"los"`
	// Clamped is set when the observed LLR lay well outside the bounds
	// or a confidence bound hit the ±1000 window.
	Clamped bool `json:"clamped"`
}

// sequentialModel is the state of Fishtest's class sprt after set_state.
type sequentialModel struct {
	a, b    float64 // LLR bounds
	s0, s1  float64 // hypotheses as expected scores
	pdf     pdf
	llr     float64 // Brownian-approximation LLR, clamped to [a, b]
	T       float64 // sample count at which that LLR was reached
	clamped bool
}

func newSequentialModel(alpha, beta, elo0, elo1 float64, model Model, counts []float64) sequentialModel {
	m := sequentialModel{a: math.Log(beta / (1 - alpha)), b: math.Log((1 - beta) / alpha)}
	var n float64
	for _, c := range counts {
		n += c
	}
	k := len(counts)
	m.pdf = make(pdf, k)
	for i, c := range counts {
		m.pdf[i] = atom{float64(i) / float64(k-1), c / n}
	}
	toScore := logisticScore
	if model == Normalized {
		_, variance := m.pdf.meanVar()
		sigmaPerGame := math.Sqrt(variance)
		if k == 5 {
			sigmaPerGame = math.Sqrt(2 * variance)
		}
		toScore = func(nelo float64) float64 { return nelo/neloDividedByNT*sigmaPerGame + 0.5 }
	}
	m.s0, m.s1 = toScore(elo0), toScore(elo1)

	mean, variance := m.pdf.meanVar()
	m.llr = n * driftAlt2(mean, variance, m.s0, m.s1)
	m.T = n
	// A path that ended beyond a bound is moved back onto it, at the time
	// the same slope would have reached it.
	slope := m.llr / n
	if m.llr > 1.03*m.b || m.llr < 1.03*m.a {
		m.clamped = true
	}
	if m.llr < m.a {
		m.T = m.a / slope
		m.llr = m.a
	} else if m.llr > m.b {
		m.T = m.b / slope
		m.llr = m.b
	}
	return m
}

// outcomeProb is the probability, at true logistic Elo elo, of an outcome
// worse than the observed one (a faster fail, a slower pass, or a pass
// turned into a fail).
func (m *sequentialModel) outcomeProb(elo float64) float64 {
	s := logisticScore(elo)
	_, variance := m.pdf.meanVar()
	mu := driftAlt2(s, variance, m.s0, m.s1)
	sigma := math.Sqrt((m.s1 - m.s0) * (m.s1 - m.s0) / variance)
	return brownian{a: m.a, b: m.b, mu: mu, sigma2: sigma * sigma}.outcomeCDF(m.T, m.llr)
}

// confidenceBounds returns, for each p, the Elo where outcomeProb = 1−p: the
// leftmost descending crossing inside [−1000, 1000], or the clamp.
func (m *sequentialModel) confidenceBounds(ps []float64) []float64 {
	lo, hi := -confidenceClamp, confidenceClamp
	steps := int(math.Round((hi - lo) / confidenceStep))
	levels := make([]float64, len(ps))
	bounds := make([]float64, len(ps))
	opPrev := m.outcomeProb(lo)
	var pending []int
	for i, p := range ps {
		levels[i] = 1 - p
		if opPrev <= levels[i] {
			bounds[i] = lo
			m.clamped = true
		} else {
			pending = append(pending, i)
		}
	}
	xPrev := lo
	for step := 1; step <= steps && len(pending) > 0; step++ {
		x := lo + (hi-lo)*float64(step)/float64(steps)
		op := m.outcomeProb(x)
		var still []int
		for _, i := range pending {
			level := levels[i]
			if opPrev >= level && level > op {
				// The bracket changes sign by construction, so brentq cannot
				// fail; like SciPy with disp=False, a root that did not
				// converge in 100 steps is still the best iterate.
				root, _, err := brentq(func(elo float64) float64 { return m.outcomeProb(elo) - level }, xPrev, x)
				if err != nil {
					root = x
				}
				bounds[i] = root
			} else {
				still = append(still, i)
			}
		}
		pending = still
		xPrev, opPrev = x, op
	}
	for _, i := range pending {
		bounds[i] = hi
		m.clamped = true
	}
	return bounds
}

// SPRTElo is Fishtest's SPRT_elo: the median-unbiased logistic Elo of a
// sequential test with its confidence interval at level 1−p (p = 0.05 for
// 95%) and LOS. W/D/L or the pentanomial feed it as they feed the LLR.
func SPRTElo(params Params, r Results, p float64) (EloEstimate, error) {
	if err := params.Validate(); err != nil {
		return EloEstimate{}, err
	}
	if err := r.Validate(); err != nil {
		return EloEstimate{}, err
	}
	if !(p > 0 && p < 1) {
		return EloEstimate{}, fmt.Errorf("confidence p = %g is not in (0, 1)", p)
	}
	elo0, elo1, model, err := params.logisticBounds(r)
	if err != nil {
		return EloEstimate{}, err
	}
	m := newSequentialModel(params.Alpha, params.Beta, elo0, elo1, model, regularize(r.sprtCounts()))
	b := m.confidenceBounds([]float64{0.5, p / 2, 1 - p/2})
	return EloEstimate{
		Elo:     b[0],
		CI95:    [2]float64{b[1], b[2]},
		LOS:     m.outcomeProb(0),
		Clamped: m.clamped,
	}, nil
}
