package sprt

import (
	"fmt"
	"math"
)

// eloClampScore keeps Fishtest's elo() finite: scores are clamped to
// [0.001, 0.999], i.e. about ±1200 Elo.
const eloClampScore = 1e-3

// EloFromScore is Fishtest's elo(): logistic Elo of an expected score, with
// the score clamped to [0.001, 0.999].
func EloFromScore(score float64) float64 {
	score = math.Max(score, eloClampScore)
	score = math.Min(score, 1-eloClampScore)
	return -400 * math.Log10(1/score-1)
}

// FixedElo is the plain normal-approximation Elo that Fishtest shows for
// fixed-games runs (stat_util.get_elo): Elo ± HalfWidth95 with LOS.
type FixedElo struct {
	Elo         float64    `json:"elo"`
	HalfWidth95 float64    `json:"elo95_halfwidth"`
	CI95        [2]float64 `json:"ci95"`
	LOS         float64    `json:"los"`
}

// FixedGamesElo computes get_elo on the pentanomial if present, otherwise on
// [L,D,W]. The variance is per game in both cases, so the pentanomial's CI is
// the narrower, paired one. r must pass Results.Validate; the figures of
// negative counts mean nothing.
func FixedGamesElo(r Results) FixedElo {
	counts := regularize(r.sprtCounts())
	k := len(counts)
	var n float64
	for _, c := range counts {
		n += c
	}
	games := n * float64(k-1) / 2
	var mu float64
	for i, c := range counts {
		mu += c * (float64(i) / 2)
	}
	mu /= games
	// A result bucket i is worth i/2 points over (k-1)/2 games.
	bucketMean := float64(k-1) / 2 * mu
	var variance float64
	for i, c := range counts {
		d := float64(i)/2 - bucketMean
		variance += c * (d * d)
	}
	variance /= games
	stdev := math.Sqrt(variance)
	muMin := mu + NormalQuantile(0.025)*stdev/math.Sqrt(games)
	muMax := mu + NormalQuantile(0.975)*stdev/math.Sqrt(games)
	elo := EloFromScore(mu)
	half := (EloFromScore(muMax) - EloFromScore(muMin)) / 2
	return FixedElo{
		Elo:         elo,
		HalfWidth95: half,
		CI95:        [2]float64{elo - half, elo + half},
		LOS:         normalCDF((mu - 0.5) / (stdev / math.Sqrt(games))),
	}
}

// NElo is normalized Elo with its 95% confidence interval, as on Fishtest's
// test statistics page.
type NElo struct {
	NElo        float64    `json:"nelo"`
	CI95        [2]float64 `json:"ci95"`
	HalfWidth95 float64    `json:"halfwidth95"`
}

// tConf is Fishtest's t_conf: the t-value (mean−½)/σ of a distribution and
// the asymptotic variance of its estimate, floored at 0 against rounding.
func tConf(mean, variance, skewness, exkurt float64) (t, varT float64) {
	t = (mean - 0.5) / math.Sqrt(variance)
	varT = math.Max(1-t*skewness+0.25*t*t*(exkurt+2), 0)
	return t, varT
}

// z975 is Φ⁻¹(0.975), the 95% two-sided normal quantile.
var z975 = NormalQuantile(0.975)

// NEloFromTrinomial is normalized Elo from game counts:
// (800/ln10)·(score−½)/σ_game. Counts must be non-negative.
func NEloFromTrinomial(losses, draws, wins int64) NElo {
	n, d := resultsToPDF([]int64{losses, draws, wins})
	t, varT := tConf(d.moments())
	half := z975 * math.Sqrt(varT/n)
	return NElo{
		NElo:        neloDividedByNT * t,
		CI95:        [2]float64{neloDividedByNT * (t - half), neloDividedByNT * (t + half)},
		HalfWidth95: neloDividedByNT * half,
	}
}

// NEloFromPentanomial is normalized Elo from pair counts: the t-value of the
// pair average divided by √2, so that it estimates the same quantity as the
// per-game nElo while using the pairs' lower variance. Counts must be
// non-negative.
func NEloFromPentanomial(p Pentanomial) NElo {
	n, d := resultsToPDF(p[:])
	t, varT := tConf(d.moments())
	half := z975 * math.Sqrt(varT/n)
	return NElo{
		NElo:        neloDividedByNT * (t / math.Sqrt2),
		CI95:        [2]float64{neloDividedByNT * ((t - half) / math.Sqrt2), neloDividedByNT * ((t + half) / math.Sqrt2)},
		HalfWidth95: neloDividedByNT / math.Sqrt2 * z975 * math.Sqrt(varT/n),
	}
}

// drawEloOf is Fishtest's draw_elo_calc on [L,D,W] frequencies.
func drawEloOf(ldw []float64) (float64, error) {
	n := ldw[0] + ldw[1] + ldw[2]
	pLoss, pWin := ldw[0]/n, ldw[2]/n
	if !(0 < pWin && pWin < 1 && 0 < pLoss && pLoss < 1) {
		return 0, fmt.Errorf("draw Elo needs win and loss rates strictly between 0 and 1 (got %g, %g)", pWin, pLoss)
	}
	return 200 * math.Log10((1-pLoss)/pLoss*(1-pWin)/pWin), nil
}

// DrawElo is the BayesElo draw Elo estimated from game counts, regularized
// as Fishtest does (so it is defined for any counts).
func DrawElo(losses, draws, wins int64) (float64, error) {
	if losses < 0 || draws < 0 || wins < 0 {
		return 0, fmt.Errorf("negative game count (losses %d, draws %d, wins %d)", losses, draws, wins)
	}
	return drawEloOf(regularize([]int64{losses, draws, wins}))
}

// BayesEloToElo converts a BayesElo difference to logistic Elo at the given
// draw Elo (Fishtest's bayeselo_to_elo).
func BayesEloToElo(bayesElo, drawElo float64) float64 {
	pWin := 1.0 / (1.0 + math.Pow(10.0, (-bayesElo+drawElo)/400.0))
	pLoss := 1.0 / (1.0 + math.Pow(10.0, (bayesElo+drawElo)/400.0))
	pDraw := 1.0 - pWin - pLoss
	return EloFromScore(pWin + 0.5*pDraw)
}
