package sprt

// Anytime-valid Elo: a confidence sequence for the expected score, valid
// at every look at once, so that a test stopped by hand, by a cap, or by a
// precision rule keeps its stated coverage however the stopping time was
// chosen. Fishtest's fixed-games interval (FixedGamesElo) covers at 95% only
// when the number of games was fixed in advance; looked at after every batch
// and stopped on a good-looking result it covers far less (the simulation in
// anytime_test.go measures both).
//
// Method: the mixture of constant bets of Waudby-Smith and Ramdas,
// "Estimating means of bounded random variables by betting" (JRSS-B 86(1),
// 2024; arXiv:2010.09686), with Robbins' method of mixtures and Ville's
// inequality. For a candidate mean score m, a bettor who stakes the
// fraction λ of its wealth on each pair's score x ∈ [0, 1] being above m
// has wealth Π (1 + λ(x_i − m)); if m is the true mean this is a
// nonnegative martingale for every λ in [−1/(1−m), 1/m], and so is any
// mixture of them over a prior fixed in advance. Ville's inequality gives
// P(the mixture ever reaches 1/α) ≤ α, so the m whose mixed wealth is below
// 1/α form a (1−α) confidence sequence. The prior is uniform on the
// fraction θ ∈ [−1, 1] of the largest safe bet (λ = θ/m for θ ≥ 0,
// θ/(1−m) below).
//
// Why this one: it needs nothing but that a pair's score lies in [0, 1]
// (no variance proxy to state and get wrong: the wealth adapts to the
// pairs' real, small, variance, where a Hoeffding bound would assume the
// largest one, 1/4, and be about 2.5 times wider); and a mixture of
// constant bets depends on the counts only, not on the order of the pairs,
// so the coordinator computes it from the committed pentanomial alone and
// it is the same after a restart (a predictable-bet process would need the
// order of the pairs inside a batch, which nobody records).
//
// Invariants kept here:
//   - Pure: counts in, interval out; no state, no I/O.
//   - The interval always holds the sample mean (whose wealth is at most 1
//     for every bet), and is [0, 1] in score (±1200 Elo after
//     EloFromScore's clamp) when there are no counts.
//   - Numerical errors only ever widen it: the wealth integral is taken
//     over the window where the integrand is within e^-60 of its peak, and
//     an endpoint is the last candidate found inside the sequence
//     (within 1e-8 in score, about 1e-5 Elo).
//   - The nElo interval is the score interval divided by the sample
//     standard deviation: a plug-in, anytime-valid for the score but not
//     for the deviation, which is said wherever it is shown.

import (
	"fmt"
	"math"
)

// DefaultAnytimeLevel is the coverage of the anytime interval shown beside
// Fishtest's 95% figures.
const DefaultAnytimeLevel = 0.95

// AnytimeElo is a confidence sequence's interval at the current counts.
type AnytimeElo struct {
	// Level is the stated coverage, uniformly over every look (0.95).
	Level float64 `json:"level"`
	// Score bounds the expected score per game (a pair's score / 2).
	Score [2]float64 `json:"score"`
	// Elo is Score in logistic Elo (EloFromScore, clamped to ±1200).
	Elo [2]float64 `json:"elo"`
	// NElo is Score in normalized Elo at the sample standard deviation
	// (a plug-in: see the file comment).
	NElo [2]float64 `json:"nelo"`
}

// Width is the Elo interval's width, what --stop precision= compares.
func (a AnytimeElo) Width() float64 { return a.Elo[1] - a.Elo[0] }

// AnytimeInterval is the (level) anytime-valid interval of r: on the
// pentanomial's pair scores when there is one, otherwise on single games
// (W/D/L, a game's score in [0, 1]).
func AnytimeInterval(r Results, level float64) (AnytimeElo, error) {
	if err := r.Validate(); err != nil {
		return AnytimeElo{}, err
	}
	if !(level > 0 && level < 1) {
		return AnytimeElo{}, fmt.Errorf("anytime level %g is not in (0, 1)", level)
	}
	counts := r.sprtCounts()
	var n int64
	for _, c := range counts {
		n += c
	}
	out := AnytimeElo{Level: level}
	if n == 0 {
		out.Score = [2]float64{0, 1}
	} else {
		w := wealth{counts: counts}
		out.Score = w.interval(math.Log(1 / (1 - level)))
	}
	out.Elo = [2]float64{EloFromScore(out.Score[0]), EloFromScore(out.Score[1])}
	out.NElo = anytimeNElo(counts, out.Score)
	return out, nil
}

// anytimeNElo turns score bounds into nElo at the sample deviation, as
// NEloFromPentanomial/NEloFromTrinomial do for their estimate.
func anytimeNElo(counts []int64, score [2]float64) [2]float64 {
	_, d := resultsToPDF(counts)
	_, variance := d.meanVar()
	scale := neloDividedByNT / math.Sqrt(variance)
	if len(counts) == 5 {
		scale /= math.Sqrt2
	}
	return [2]float64{scale * (score[0] - 0.5), scale * (score[1] - 0.5)}
}

// wealth is the mixture-of-bets capital of counts: counts[j] outcomes of
// score j/(k−1).
type wealth struct{ counts []int64 }

// Grids of the computation: the number of trapezoids over the integrand's
// window, how far below its peak the window reaches (in log), and the
// bisection steps of the searches in the bet fraction, and the precision
// of the interval's endpoints in score.
const (
	wealthGrid     = 120
	wealthWindow   = 60.0
	peakBisect     = 30
	edgeBisect     = 20
	scoreTolerance = 1e-8
	scoreEndpoint  = 1e-12
	scoreFirstStep = 1e-4
)

// at is log Π (1 + λ(x − m)) over the counts (−Inf where a factor is
// zero or negative) and its slope in λ, which falls as λ grows (the log
// is concave in λ).
func (w wealth) at(m, lambda float64) (logBet, slope float64) {
	k := float64(len(w.counts) - 1)
	for j, c := range w.counts {
		if c == 0 {
			continue
		}
		d := float64(j)/k - m
		f := 1 + lambda*d
		if f <= 0 {
			return math.Inf(-1), math.Inf(-1)
		}
		logBet += float64(c) * math.Log(f)
		slope += float64(c) * d / f
	}
	return logBet, slope
}

// logCapital is log of the mixture ∫ Π(1+λ(x−m)) dπ(λ), π uniform on the
// bet fraction θ ∈ [−1, 1] (density ½): the half θ ∈ [0, 1] is λ = θ/m,
// the other λ = θ/(1−m). Each half is integrated on its own, as the log
// is concave in θ there.
func (w wealth) logCapital(m float64) float64 {
	up := w.logHalf(m, 1/m)
	down := w.logHalf(m, -1/(1-m))
	hi := math.Max(up, down)
	if math.IsInf(hi, -1) {
		return hi
	}
	return math.Log(0.5) + hi + math.Log(math.Exp(up-hi)+math.Exp(down-hi))
}

// logHalf is log ∫_0^1 Π(1+θ·lmax·(x−m)) dθ: the integral over λ from 0
// to lmax, divided by |lmax| (θ's measure).
func (w wealth) logHalf(m, lmax float64) float64 {
	g := func(theta float64) float64 { v, _ := w.at(m, theta*lmax); return v }
	// rising: the log is finite and still rising in θ there.
	rising := func(theta float64) bool {
		v, slope := w.at(m, theta*lmax)
		return !math.IsInf(v, -1) && slope*lmax > 0
	}
	// The peak: the log is concave in θ, so its slope changes sign once.
	lo, hi := 0.0, 1.0
	if !rising(0) {
		hi = 0
	}
	for i := 0; i < peakBisect && lo < hi; i++ {
		mid := (lo + hi) / 2
		if rising(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	peakTheta := lo
	peak := g(peakTheta)
	if math.IsInf(peak, -1) {
		return peak
	}
	// The window where g ≥ peak − wealthWindow: g is concave, so each edge
	// is found by bisection; beyond it the integrand is below e^-60 of the
	// peak and falls at least linearly in log (the chord bound).
	edge := func(from, to float64) float64 {
		if g(to) >= peak-wealthWindow {
			return to
		}
		a, b := from, to
		for i := 0; i < edgeBisect; i++ {
			mid := (a + b) / 2
			if g(mid) >= peak-wealthWindow {
				a = mid
			} else {
				b = mid
			}
		}
		return b
	}
	left, right := edge(peakTheta, 0), edge(peakTheta, 1)
	if right <= left {
		return math.Inf(-1)
	}
	h := (right - left) / wealthGrid
	var sum float64
	for i := 0; i <= wealthGrid; i++ {
		f := math.Exp(g(left+float64(i)*h) - peak)
		if i == 0 || i == wealthGrid {
			f /= 2
		}
		sum += f
	}
	return peak + math.Log(sum*h)
}

// interval is the set of m with logCapital(m) < threshold, as [low, high]:
// from the sample mean (always inside) outwards in doubling steps to the
// first m outside, then bisection; the endpoint is the last m inside.
func (w wealth) interval(threshold float64) [2]float64 {
	var n, sum float64
	k := float64(len(w.counts) - 1)
	for j, c := range w.counts {
		n += float64(c)
		sum += float64(c) * float64(j) / k
	}
	mean := sum / n
	inside := func(m float64) bool { return w.logCapital(m) < threshold }
	endpoint := func(dir float64) float64 {
		limit := scoreEndpoint
		if dir > 0 {
			limit = 1 - scoreEndpoint
		}
		in := mean
		step := scoreFirstStep
		for {
			m := mean + dir*step
			if dir*(m-limit) >= 0 {
				if inside(limit) {
					return math.Round(limit) // 0 or 1: nothing excluded on this side
				}
				return bisectBoundary(inside, in, limit)
			}
			if !inside(m) {
				return bisectBoundary(inside, in, m)
			}
			in = m
			step *= 2
		}
	}
	return [2]float64{endpoint(-1), endpoint(1)}
}

// bisectBoundary narrows [in, out] (inside(in), !inside(out)) and returns
// the last point found inside.
func bisectBoundary(inside func(float64) bool, in, out float64) float64 {
	for math.Abs(out-in) > scoreTolerance {
		mid := (in + out) / 2
		if inside(mid) {
			in = mid
		} else {
			out = mid
		}
	}
	return in
}

// MaxPrecisionElo bounds --stop precision=: an interval wider than this
// says nothing a test needs games for.
const MaxPrecisionElo = 1000

// CheckPrecision validates a precision stop's width in Elo: positive,
// finite, at most MaxPrecisionElo. what names the input in the error.
func CheckPrecision(what string, elo float64) error {
	if math.IsNaN(elo) || math.IsInf(elo, 0) || elo <= 0 || elo > MaxPrecisionElo {
		return fmt.Errorf("%s: %g is not a width in Elo in (0, %d]", what, elo, MaxPrecisionElo)
	}
	return nil
}

// PrecisionReached reports whether r's anytime-valid Elo interval at
// level (DefaultAnytimeLevel, or a take's TakeLevel) is narrower than
// width Elo: the --stop precision= rule, a function of the counts only, so
// a test re-evaluates it exactly on its committed counts after a restart.
// No games never reach it.
func PrecisionReached(r Results, width, level float64) (bool, AnytimeElo, error) {
	if err := CheckPrecision("precision", width); err != nil {
		return false, AnytimeElo{}, err
	}
	if r.Games() == 0 {
		return false, AnytimeElo{}, nil
	}
	a, err := AnytimeInterval(r, level)
	if err != nil {
		return false, AnytimeElo{}, err
	}
	return a.Width() < width, a, nil
}
