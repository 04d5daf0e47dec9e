package fastchesscli

import (
	"fmt"
	"math"
	"strings"

	"github.com/arbiter-chess/arbiter/sprt"
)

// This file prints fastchess's head-to-head report block, each line as
// the fastchess named in compat.go prints it on the same games:
//
//	--------------------------------------------------
//	Results of A vs B (100 nodes, 1t, 16MB, book.epd):
//	Elo: -34.86 +/- 68.19, nElo: -57.35 +/- 110.77
//	LOS: 15.78 %, DrawRatio: 33.33 %, PairsRatio: 0.50
//	Games: 12, Wins: 3, Losses: 5, Draws: 4, Points: 5.0 (41.67 %)
//	Ptnml(0-2): [1, 2, 2, 1, 0], WL/DD Ratio: 1.00
//	--------------------------------------------------
//
// The figures are fastchess's formulas (elo_pentanomial.cpp, elo_wdl.cpp,
// stats.hpp) in the same order of operations, so that they round alike,
// and a figure that is not a number prints as fastchess's does: "nan" or
// "-nan" by the sign bit, which an undefined operation (0/0) sets on the
// processors fastchess runs on. These are not Fishtest's figures (the
// sprt package's): Fishtest's parser reads only the Games and Ptnml lines,
// and a farm's logs compare with fastchess's.

// fastchessStats are the counts fastchess's report reads: the first
// engine's games and game pairs against the second. WL and DD are apart
// because the WL/DD ratio divides them.
type fastchessStats struct {
	wins, losses, draws    int64
	ll, ld, wl, dd, wd, ww int64
}

// statsOf is res as fastchess counts it. With a pentanomial every game is
// in a complete pair, so the pairs that won one game and lost the other
// are the wins not in a WD or WW pair.
func statsOf(res sprt.Results) fastchessStats {
	s := fastchessStats{wins: res.Wins, losses: res.Losses, draws: res.Draws}
	if p := res.Pentanomial; p != nil {
		s.ll, s.ld, s.wd, s.ww = p[0], p[1], p[3], p[4]
		s.wl = res.Wins - p[3] - 2*p[4]
		s.dd = p[2] - s.wl
	}
	return s
}

func (s fastchessStats) games() int64 { return s.wins + s.losses + s.draws }
func (s fastchessStats) pairs() int64 { return s.ww + s.wd + s.wl + s.dd + s.ld + s.ll }
func (s fastchessStats) points() float64 {
	return float64(s.wins) + 0.5*float64(s.draws)
}

// fastchessElo is fastchess's EloBase: the score, its variance per game
// or per pair, the Elo and nElo with their 95% half-widths.
type fastchessElo struct {
	score, variancePer  float64
	diff, err           float64
	neloDiff, neloError float64
}

const ci95ZScore = 1.959963984540054

func scoreToEloDiff(score float64) float64 { return -400.0 * math.Log10(1.0/score-1.0) }

// pentanomialElo is fastchess's EloPentanomial.
func pentanomialElo(s fastchessStats) fastchessElo {
	pairs := float64(s.pairs())
	ww, wd, wl := float64(s.ww)/pairs, float64(s.wd)/pairs, float64(s.wl)/pairs
	dd, ld, ll := float64(s.dd)/pairs, float64(s.ld)/pairs, float64(s.ll)/pairs
	score := ww + 0.75*wd + 0.5*(wl+dd) + 0.25*ld
	variance := ww*math.Pow(1-score, 2) + wd*math.Pow(0.75-score, 2) + (wl+dd)*math.Pow(0.5-score, 2) +
		ld*math.Pow(0.25-score, 2) + ll*math.Pow(0-score, 2)
	nelo := func(score float64) float64 { return (score - 0.5) / math.Sqrt(2*variance) * (800 / math.Ln10) }
	return eloFrom(score, variance, variance/pairs, nelo)
}

// wdlElo is fastchess's EloWDL (-report penta=false).
func wdlElo(s fastchessStats) fastchessElo {
	games := float64(s.games())
	w, d, l := float64(s.wins)/games, float64(s.draws)/games, float64(s.losses)/games
	score := w + 0.5*d
	variance := w*math.Pow(1-score, 2) + d*math.Pow(0.5-score, 2) + l*math.Pow(0-score, 2)
	nelo := func(score float64) float64 { return (score - 0.5) / math.Sqrt(variance) * (800 / math.Ln10) }
	return eloFrom(score, variance, variance/games, nelo)
}

func eloFrom(score, variance, variancePer float64, nelo func(float64) float64) fastchessElo {
	upper := score + ci95ZScore*math.Sqrt(variancePer)
	lower := score - ci95ZScore*math.Sqrt(variancePer)
	return fastchessElo{
		score: score, variancePer: variancePer,
		diff: scoreToEloDiff(score), err: (scoreToEloDiff(upper) - scoreToEloDiff(lower)) / 2.0,
		neloDiff: nelo(score), neloError: (nelo(upper) - nelo(lower)) / 2.0,
	}
}

// los is fastchess's likelihood of superiority, a fraction.
func (e fastchessElo) los() float64 {
	return (1 - cErf(-(e.score-0.5)/math.Sqrt(2.0*e.variancePer))) / 2.0
}

// cErf is C's erf: Go's math.Erf answers every NaN with a positive one,
// C's keeps the argument's (and so its sign, which the report prints).
func cErf(x float64) float64 {
	if math.IsNaN(x) {
		return x
	}
	return math.Erf(x)
}

// cFixed is C's "%.*f" (and fmt's "{:.Nf}"): "nan" and "-nan" by the
// sign bit, "inf", "-inf", and -0.00 kept.
func cFixed(x float64, decimals int) string {
	switch {
	case math.IsNaN(x) && math.Signbit(x):
		return "-nan"
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return fmt.Sprintf("%.*f", decimals, x)
}

// fastchessBlock is the report between its two rules: header is the
// "Results of A vs B (...)" line without its colon, penta says whether
// the pentanomial lines are printed (-report penta=true), llr is the LLR
// line ("" without -sprt).
func fastchessBlock(header string, res sprt.Results, penta bool, llr string) string {
	s := statsOf(res)
	var e fastchessElo
	drawRatio := 100.0 * float64(s.draws) / float64(s.games())
	if penta {
		e = pentanomialElo(s)
		drawRatio = float64(s.wl+s.dd) / float64(s.pairs()) * 100.0
	} else {
		e = wdlElo(s)
	}
	var b strings.Builder
	b.WriteString(reportRule + "\n")
	fmt.Fprintf(&b, "%s:\n", header)
	fmt.Fprintf(&b, "Elo: %s +/- %s, nElo: %s +/- %s\n", cFixed(e.diff, 2), cFixed(e.err, 2), cFixed(e.neloDiff, 2), cFixed(e.neloError, 2))
	fmt.Fprintf(&b, "LOS: %s %%, DrawRatio: %s %%", cFixed(e.los()*100.0, 2), cFixed(drawRatio, 2))
	if penta {
		pairsRatio := float64(s.ww+s.wd) / float64(s.ld+s.ll)
		fmt.Fprintf(&b, ", PairsRatio: %s", cFixed(pairsRatio, 2))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Games: %d, Wins: %d, Losses: %d, Draws: %d, Points: %s (%s %%)\n",
		s.games(), s.wins, s.losses, s.draws, cFixed(s.points(), 1), cFixed(s.points()/float64(s.games())*100, 2))
	if penta {
		fmt.Fprintf(&b, "Ptnml(0-2): [%d, %d, %d, %d, %d], WL/DD Ratio: %s\n",
			s.ll, s.ld, s.wl+s.dd, s.wd, s.ww, cFixed(float64(s.wl)/float64(s.dd), 2))
	}
	b.WriteString(llr)
	b.WriteString(reportRule + "\n")
	return b.String()
}

const reportRule = "--------------------------------------------------"

// llrLine is fastchess's LLR line: the LLR, the share of the bound it
// heads for, the bounds and the Elo hypotheses.
func llrLine(p *sprt.Params, res sprt.Results) string {
	if p == nil {
		return ""
	}
	lower, upper := p.Bounds()
	llr, err := sprt.LLR(*p, res)
	if err != nil {
		return fmt.Sprintf("LLR: n/a (%v)\n", err)
	}
	fraction := llr / upper
	if llr < 0 {
		fraction = -llr / lower
	}
	return fmt.Sprintf("LLR: %.2f (%.1f%%) (%.2f, %.2f) [%.2f, %.2f]\n", llr, fraction*100, lower, upper, p.Elo0, p.Elo1)
}
