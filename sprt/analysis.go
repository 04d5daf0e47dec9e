package sprt

import (
	"fmt"
	"math"
	"strings"
)

// Analysis is everything Fishtest shows for one set of results under one
// SPRT design. It is a one-shot view: Status comes from a single
// update_SPRT on a fresh test with batch size 1, as the reference vectors
// define it, so O0/O1 are zero unless the sample is exactly one batch. A
// running test should keep a Sequential instead.
type Analysis struct {
	Params   Params      `json:"params"`
	Results  Results     `json:"results"`
	Status   Status      `json:"sprt"`
	Estimate EloEstimate `json:"elo_estimate"`
	Fixed    FixedElo    `json:"fixed_games_elo"`
	// NEloTrinomial is nil when W/D/L are unknown; NEloPentanomial is nil
	// without a pentanomial.
	NEloTrinomial   *NElo `json:"nelo_trinomial,omitempty"`
	NEloPentanomial *NElo `json:"nelo_pentanomial,omitempty"`
	// LLRBounds are elo0 and elo1 in the model the LLR is computed in:
	// the design's own bounds, or for BayesElo the logistic equivalents at
	// DrawElo.
	LLRBounds [2]float64 `json:"llr_bounds"`
	LLRModel  Model      `json:"llr_model"`
	// DrawElo is set for the BayesElo model only.
	DrawElo *float64 `json:"drawelo,omitempty"`
}

// NElo is the headline normalized Elo: from the pentanomial when there is
// one (Fishtest's "nElo: x ± h (95%)"), otherwise from W/D/L.
func (a Analysis) NElo() NElo {
	if a.NEloPentanomial != nil {
		return *a.NEloPentanomial
	}
	if a.NEloTrinomial != nil {
		return *a.NEloTrinomial
	}
	return NElo{}
}

// Analyze computes the SPRT state, the sequential Elo estimate (95%), the
// fixed-games Elo and nElo of r under p.
func Analyze(p Params, r Results) (Analysis, error) {
	if err := p.Validate(); err != nil {
		return Analysis{}, err
	}
	if err := r.Validate(); err != nil {
		return Analysis{}, err
	}
	if p.Model == BayesElo && !r.HasWDL() {
		return Analysis{}, fmt.Errorf("the BayesElo model needs W/D/L counts, only a pentanomial was given")
	}
	seq, err := NewSequential(p, 1)
	if err != nil {
		return Analysis{}, err
	}
	status, err := seq.Update(r)
	if err != nil {
		return Analysis{}, err
	}
	estimate, err := SPRTElo(p, r, 0.05)
	if err != nil {
		return Analysis{}, err
	}
	elo0, elo1, model, err := p.logisticBounds(r)
	if err != nil {
		return Analysis{}, err
	}
	a := Analysis{
		Params:    p,
		Results:   r,
		Status:    status,
		Estimate:  estimate,
		Fixed:     FixedGamesElo(r),
		LLRBounds: [2]float64{elo0, elo1},
		LLRModel:  model,
	}
	if r.HasWDL() {
		n := NEloFromTrinomial(r.Losses, r.Draws, r.Wins)
		a.NEloTrinomial = &n
	}
	if r.Pentanomial != nil {
		n := NEloFromPentanomial(*r.Pentanomial)
		a.NEloPentanomial = &n
	}
	if p.Model == BayesElo {
		de, err := DrawElo(r.Losses, r.Draws, r.Wins)
		if err != nil {
			return Analysis{}, err
		}
		a.DrawElo = &de
	}
	return a, nil
}

// PairsRatio is (DW+WD + WW) / (LL + LD+DL): +Inf when only the numerator
// has pairs and NaN when neither has, as Fishtest shows it.
func PairsRatio(p Pentanomial) float64 {
	good, bad := p[3]+p[4], p[0]+p[1]
	switch {
	case bad > 0:
		return float64(good) / float64(bad)
	case good > 0:
		return math.Inf(1)
	}
	return math.NaN()
}

// Report is what a match runner prints after each batch, fastchess style.
type Report struct {
	// First and Second name the new engine and the baseline.
	First, Second string
	// Details go in parentheses after the names (time control, threads,
	// hash, book); omitted when empty.
	Details string
	Results Results
	// SPRT adds the LLR line; nil for a fixed-games match.
	SPRT *Params
}

const reportRule = "--------------------------------------------------"

// FormatReport renders r in the layout fastchess prints, e.g.
//
//	Results of New vs Base (10+0.1, 1t, 16MB, book.epd):
//	Elo: 1.23 +/- 2.34, nElo: 2.34 +/- 4.45
//	LOS: 85.83 %, DrawRatio: 48.23 %, PairsRatio: 1.05
//	Games: 10000, Wins: 2800, Losses: 2700, Draws: 4500, Points: 5050.0 (50.50 %)
//	Ptnml(0-2): [100, 1200, 2400, 1250, 50], WL/DD Ratio: 1.10
//	LLR: 1.23 (41.8%) (-2.94, 2.94) [0.00, 2.00]
//
// between two rules. Elo, its CI and LOS are Fishtest's get_elo (paired when
// there is a pentanomial), nElo is the pentanomial nElo ± its 95% half-width
// (W/D/L nElo without pairs), and the LLR percentage is the share of the
// bound it is heading for. It never fails: a figure that cannot be computed
// is printed as "n/a" with the reason.
func FormatReport(r Report) string {
	var b strings.Builder
	b.WriteString(reportRule + "\n")
	header := fmt.Sprintf("Results of %s vs %s", r.First, r.Second)
	if r.Details != "" {
		header += " (" + r.Details + ")"
	}
	b.WriteString(header + ":\n")

	res := r.Results
	if err := res.Validate(); err != nil {
		fmt.Fprintf(&b, "results: n/a (%v)\n%s\n", err, reportRule)
		return b.String()
	}
	fixed := FixedGamesElo(res)
	var nelo NElo
	if res.Pentanomial != nil {
		nelo = NEloFromPentanomial(*res.Pentanomial)
	} else {
		nelo = NEloFromTrinomial(res.Losses, res.Draws, res.Wins)
	}
	if why := notEstimable(res, fixed, nelo); why != "" {
		fmt.Fprintf(&b, "Elo: not estimable, nElo: not estimable (%s)\n", why)
	} else {
		fmt.Fprintf(&b, "Elo: %s +/- %s, nElo: %s +/- %s\n",
			fixed2(fixed.Elo), fixed2(fixed.HalfWidth95), fixed2(nelo.NElo), fixed2(nelo.HalfWidth95))
	}

	games := res.Games()
	drawRatio, points, pointsPct := 0.0, float64(res.Wins)+0.5*float64(res.Draws), 0.0
	if res.HasWDL() && games > 0 {
		drawRatio = float64(res.Draws) / float64(games)
		pointsPct = points / float64(games)
	}
	line := fmt.Sprintf("LOS: %s %%", fixed2(100*fixed.LOS))
	if res.HasWDL() {
		line += fmt.Sprintf(", DrawRatio: %s %%", fixed2(100*drawRatio))
	}
	if res.Pentanomial != nil {
		line += fmt.Sprintf(", PairsRatio: %s", fixed2(PairsRatio(*res.Pentanomial)))
	}
	b.WriteString(line + "\n")
	if res.HasWDL() {
		fmt.Fprintf(&b, "Games: %d, Wins: %d, Losses: %d, Draws: %d, Points: %.1f (%s %%)\n",
			games, res.Wins, res.Losses, res.Draws, points, fixed2(100*pointsPct))
	} else {
		fmt.Fprintf(&b, "Games: %d\n", games)
	}
	if p := res.Pentanomial; p != nil {
		line := fmt.Sprintf("Ptnml(0-2): [%d, %d, %d, %d, %d]", p[0], p[1], p[2], p[3], p[4])
		if res.HasWDL() {
			wl := res.Wins - p[3] - 2*p[4]
			line += fmt.Sprintf(", WL/DD Ratio: %s", fixed2(float64(wl)/float64(p[2]-wl)))
		}
		b.WriteString(line + "\n")
	}
	if r.SPRT != nil {
		lower, upper := r.SPRT.Bounds()
		llr, err := LLR(*r.SPRT, res)
		if err != nil {
			fmt.Fprintf(&b, "LLR: n/a (%v)\n", err)
		} else {
			bound := upper
			if llr < 0 {
				bound = -lower
			}
			fmt.Fprintf(&b, "LLR: %.2f (%.1f%%) (%.2f, %.2f) [%.2f, %.2f]\n",
				llr, 100*llr/bound, lower, upper, r.SPRT.Elo0, r.SPRT.Elo1)
		}
	}
	b.WriteString(reportRule + "\n")
	return b.String()
}

// fixed2 prints a figure with two decimals, and the non-finite ratios of
// empty buckets as "inf" or "nan" rather than Go's "+Inf"/"NaN".
func fixed2(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	if s := fmt.Sprintf("%.2f", x); s != "-0.00" {
		return s
	}
	return "0.00"
}

// notEstimable says why r gives no Elo worth printing, or "": a score of
// 0 % or 100 % (every game lost or won: the Elo is infinite and the
// formulas return numbers such as nElo ±123373 that mean nothing), no
// spread at all (every pair scored alike), or figures that are not finite.
func notEstimable(r Results, fixed FixedElo, nelo NElo) string {
	score, ok := 0.0, false
	switch {
	case r.HasWDL() && r.Games() > 0:
		score, ok = (float64(r.Wins)+0.5*float64(r.Draws))/float64(r.Games()), true
	case r.Pentanomial != nil:
		p := r.Pentanomial
		if n := p[0] + p[1] + p[2] + p[3] + p[4]; n > 0 {
			score, ok = float64(p[1]+2*p[2]+3*p[3]+4*p[4])/(4*float64(n)), true
		}
	}
	switch {
	case !ok:
		return "" // no games yet: the zero figures, as fastchess prints them
	case score == 0:
		return "score 0 %: every game lost"
	case score == 1:
		return "score 100 %: every game won"
	}
	if p := r.Pentanomial; p != nil {
		for _, c := range p {
			if c > 0 && c == p[0]+p[1]+p[2]+p[3]+p[4] {
				return "no spread in the results: every pair scored alike"
			}
		}
	}
	for _, v := range []float64{fixed.Elo, fixed.HalfWidth95, nelo.NElo, nelo.HalfWidth95} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "no spread in the results"
		}
	}
	return ""
}
