package match

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/arbiter-chess/arbiter/sprt"
)

// The rating table: one Elo rating per engine, fitted jointly to every
// pairing's score by maximum likelihood, as Ordo and BayesElo do, in the
// logistic (Bradley-Terry) model with a draw worth half a win:
//
//	E(a beats b) = 1 / (1 + 10^((r_b - r_a)/400))
//	log L(r)     = sum over pairings p of  S_p ln E_p + (n_p - S_p) ln(1 - E_p)
//
// (n_p games, S_p points of the pairing's first engine). Only differences
// are fitted: the table holds one engine at 0 (a gauntlet's seed) or the
// mean of all at 0 (a round-robin).
//
// Error bars are 95% intervals from the sandwich estimate of the fit's
// covariance, H⁻¹ J H⁻¹: H is the model's information (the Hessian of
// -log L), J the observed variance of the scores, per game within a
// pairing from its game pairs (pentanomial) when there are pairs, else
// from its single games (W/D/L). For two engines this is exactly the usual
// delta-method interval of Elo(score), the paired one when games are
// paired; draws and pairing narrow it as they should.
//
// The maximum likelihood is finite only if, however the engines are split
// in two groups, each group scored some points against the other (else a
// rating runs off to infinity). When that fails (an engine won or lost
// every game, early in a tournament), every pairing that has games gets one
// virtual draw, BayesElo's prior, and the table says so.

// eloScale is ln(10)/400: d/dElo of the logistic score's log-odds.
const eloScale = math.Ln10 / 400

// z95 is the two-sided 95% normal quantile.
const z95 = 1.959963984540054

// pairingScore is one pairing's games as the fit sees them.
type pairingScore struct {
	a, b   int
	games  float64
	points float64 // a's
	// sumSq is the sum over games of a's score squared (wins + draws/4),
	// for the single-game variance.
	sumSq float64
	// pairVar is the variance of a's mean score in one game pair, and
	// pairs their number (0: unpaired, or too few pairs to say).
	pairVar float64
	pairs   float64
}

// gameVariance is the variance of a's score in one game, pairs' correlation
// included: twice the variance of a pair's mean when there are game pairs.
func (p pairingScore) gameVariance() float64 {
	if p.pairs >= 2 {
		return 2 * p.pairVar
	}
	m := p.points / p.games
	return math.Max(p.sumSq/p.games-m*m, 0)
}

// ratingFit is the fitted ratings of n engines.
type ratingFit struct {
	elo   []float64 // NaN: not rated (no games, or not connected to the anchor)
	err95 []float64 // 95% half-width
	prior bool      // virtual draws were added
}

// fitRatings fits ratings to the pairings' scores, holding engine anchor at
// 0, or (anchor < 0) the mean of the rated engines.
func fitRatings(n int, ps []pairingScore, anchor int) ratingFit {
	fit := ratingFit{elo: make([]float64, n), err95: make([]float64, n)}
	for i := range fit.elo {
		fit.elo[i], fit.err95[i] = math.NaN(), math.NaN()
	}
	var played []pairingScore
	for _, p := range ps {
		if p.games > 0 && p.a != p.b {
			played = append(played, p)
		}
	}
	// The engines rated: those connected by games to the anchor, or to
	// the largest group of connected engines.
	comp := components(n, played)
	root := anchor
	if anchor >= 0 {
		if comp[anchor] < 0 {
			return fit // the anchor has no games: nothing can be said relative to it
		}
	} else {
		size := map[int]int{}
		for _, c := range comp {
			if c >= 0 {
				size[c]++
			}
		}
		for i, c := range comp {
			if c >= 0 && (root < 0 || size[c] > size[comp[root]]) {
				root = i
			}
		}
		if root < 0 {
			return fit // no games at all
		}
	}
	var idx []int // rated engines; idx[0] is held at 0 during the fit
	pos := make([]int, n)
	for i := range pos {
		pos[i] = -1
	}
	for _, i := range append([]int{root}, seq(n)...) {
		if comp[i] == comp[root] && pos[i] < 0 {
			pos[i] = len(idx)
			idx = append(idx, i)
		}
	}
	var use []pairingScore
	for _, p := range played {
		if pos[p.a] >= 0 {
			p.a, p.b = pos[p.a], pos[p.b]
			use = append(use, p)
		}
	}
	m := len(idx)
	if m == 1 {
		fit.elo[root], fit.err95[root] = 0, 0
		return fit
	}
	if !stronglyConnected(m, use) {
		fit.prior = true
		for k := range use {
			use[k].games++
			use[k].points += 0.5
			use[k].sumSq += 0.25
			use[k].pairs = 0 // the virtual game is not paired
		}
	}
	r := solveML(m, use)
	cov := ratingCovariance(m, use, r)
	if anchor < 0 {
		// Shift to mean 0: r' = A r, Cov' = A Cov A with A = I - 11ᵀ/m.
		mean := 0.0
		for _, x := range r {
			mean += x
		}
		mean /= float64(m)
		for i := range r {
			r[i] -= mean
		}
		cov = centre(cov)
	}
	for k, i := range idx {
		fit.elo[i] = r[k]
		fit.err95[i] = z95 * math.Sqrt(math.Max(cov[k][k], 0))
	}
	return fit
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// components labels each engine with its group of engines connected by
// games (-1: no games).
func components(n int, ps []pairingScore) []int {
	comp := make([]int, n)
	for i := range comp {
		comp[i] = -1
	}
	adj := make([][]int, n)
	for _, p := range ps {
		adj[p.a] = append(adj[p.a], p.b)
		adj[p.b] = append(adj[p.b], p.a)
	}
	c := 0
	for i := 0; i < n; i++ {
		if comp[i] >= 0 || len(adj[i]) == 0 {
			continue
		}
		stack := []int{i}
		comp[i] = c
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range adj[v] {
				if comp[w] < 0 {
					comp[w] = c
					stack = append(stack, w)
				}
			}
		}
		c++
	}
	return comp
}

// stronglyConnected reports whether the "scored against" graph (a -> b when
// a took points from b) of m connected engines is strongly connected: the
// condition for a finite maximum likelihood.
func stronglyConnected(m int, ps []pairingScore) bool {
	fwd := make([][]int, m)
	rev := make([][]int, m)
	for _, p := range ps {
		if p.points > 0 {
			fwd[p.a] = append(fwd[p.a], p.b)
			rev[p.b] = append(rev[p.b], p.a)
		}
		if p.points < p.games {
			fwd[p.b] = append(fwd[p.b], p.a)
			rev[p.a] = append(rev[p.a], p.b)
		}
	}
	reach := func(adj [][]int) int {
		seen := make([]bool, m)
		seen[0] = true
		stack, n := []int{0}, 1
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range adj[v] {
				if !seen[w] {
					seen[w] = true
					n++
					stack = append(stack, w)
				}
			}
		}
		return n
	}
	return reach(fwd) == m && reach(rev) == m
}

// expected is the logistic expected score of a rating difference d (Elo).
func expected(d float64) float64 { return 1 / (1 + math.Exp(-eloScale*d)) }

func logLikelihood(ps []pairingScore, r []float64) float64 {
	var ll float64
	for _, p := range ps {
		x := eloScale * (r[p.a] - r[p.b])
		// ln E = -ln(1+e^-x), ln(1-E) = -ln(1+e^x), computed stably.
		ll -= p.points*softplus(-x) + (p.games-p.points)*softplus(x)
	}
	return ll
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// solveML maximizes the likelihood over r[1:] with r[0] = 0 by Newton's
// method with step halving (the log-likelihood is concave, and strictly so
// in r[1:] for connected engines).
func solveML(m int, ps []pairingScore) []float64 {
	r := make([]float64, m)
	ll := logLikelihood(ps, r)
	for iter := 0; iter < 500; iter++ {
		g := make([]float64, m)
		h := laplacian(m, ps, func(p pairingScore) float64 {
			e := expected(r[p.a] - r[p.b])
			g[p.a] += eloScale * (p.points - p.games*e)
			g[p.b] -= eloScale * (p.points - p.games*e)
			return eloScale * eloScale * p.games * e * (1 - e)
		})
		step := solve(reduce(h), g[1:])
		if step == nil {
			break
		}
		t, improved := 1.0, false
		for k := 0; k < 60; k++ {
			trial := make([]float64, m)
			for i := 1; i < m; i++ {
				trial[i] = r[i] + t*step[i-1]
			}
			if l := logLikelihood(ps, trial); l >= ll {
				r, ll, improved = trial, l, true
				break
			}
			t /= 2
		}
		biggest := 0.0
		for _, s := range step {
			biggest = math.Max(biggest, math.Abs(t*s))
		}
		if !improved || biggest < 1e-10 {
			break
		}
	}
	return r
}

// ratingCovariance is the sandwich covariance of the fitted r (r[0] held
// at 0, so its row and column are 0).
func ratingCovariance(m int, ps []pairingScore, r []float64) [][]float64 {
	h := laplacian(m, ps, func(p pairingScore) float64 {
		e := expected(r[p.a] - r[p.b])
		return eloScale * eloScale * p.games * e * (1 - e)
	})
	j := laplacian(m, ps, func(p pairingScore) float64 {
		return eloScale * eloScale * p.games * p.gameVariance()
	})
	hinv := invert(reduce(h))
	cov := make([][]float64, m)
	for i := range cov {
		cov[i] = make([]float64, m)
	}
	if hinv == nil {
		return cov
	}
	c := mul(mul(hinv, reduce(j)), hinv)
	for i := 1; i < m; i++ {
		for k := 1; k < m; k++ {
			cov[i][k] = c[i-1][k-1]
		}
	}
	return cov
}

// laplacian is sum over pairings of w(p) (e_a - e_b)(e_a - e_b)ᵀ.
func laplacian(m int, ps []pairingScore, w func(pairingScore) float64) [][]float64 {
	l := make([][]float64, m)
	for i := range l {
		l[i] = make([]float64, m)
	}
	for _, p := range ps {
		x := w(p)
		l[p.a][p.a] += x
		l[p.b][p.b] += x
		l[p.a][p.b] -= x
		l[p.b][p.a] -= x
	}
	return l
}

// reduce drops row and column 0 (the engine held at 0).
func reduce(a [][]float64) [][]float64 {
	out := make([][]float64, len(a)-1)
	for i := range out {
		out[i] = append([]float64(nil), a[i+1][1:]...)
	}
	return out
}

// centre returns A c A with A = I - 11ᵀ/m.
func centre(c [][]float64) [][]float64 {
	m := len(c)
	row := make([]float64, m)
	col := make([]float64, m)
	all := 0.0
	for i := range c {
		for k := range c {
			row[i] += c[i][k] / float64(m)
			col[k] += c[i][k] / float64(m)
			all += c[i][k] / float64(m*m)
		}
	}
	out := make([][]float64, m)
	for i := range out {
		out[i] = make([]float64, m)
		for k := range out[i] {
			out[i][k] = c[i][k] - row[i] - col[k] + all
		}
	}
	return out
}

func mul(a, b [][]float64) [][]float64 {
	out := make([][]float64, len(a))
	for i := range a {
		out[i] = make([]float64, len(b[0]))
		for k := range b {
			for j := range b[0] {
				out[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return out
}

// invert is the inverse of a by Gauss-Jordan elimination with partial
// pivoting; nil when a is singular.
func invert(a [][]float64) [][]float64 {
	n := len(a)
	aug := make([][]float64, n)
	for i := range a {
		aug[i] = make([]float64, 2*n)
		copy(aug[i], a[i])
		aug[i][n+i] = 1
	}
	for c := 0; c < n; c++ {
		p := c
		for i := c + 1; i < n; i++ {
			if math.Abs(aug[i][c]) > math.Abs(aug[p][c]) {
				p = i
			}
		}
		if math.Abs(aug[p][c]) < 1e-300 {
			return nil
		}
		aug[c], aug[p] = aug[p], aug[c]
		d := aug[c][c]
		for j := range aug[c] {
			aug[c][j] /= d
		}
		for i := 0; i < n; i++ {
			if i != c && aug[i][c] != 0 {
				f := aug[i][c]
				for j := range aug[i] {
					aug[i][j] -= f * aug[c][j]
				}
			}
		}
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = aug[i][n:]
	}
	return out
}

// solve returns a⁻¹ b, nil when a is singular.
func solve(a [][]float64, b []float64) []float64 {
	inv := invert(a)
	if inv == nil {
		return nil
	}
	x := make([]float64, len(b))
	for i := range inv {
		for k := range b {
			x[i] += inv[i][k] * b[k]
		}
	}
	return x
}

// RatingRow is one engine's line of the rating table.
type RatingRow struct {
	Name string
	// Elo is the fitted rating (see RatingTable.Anchor); Error the half
	// width of its 95% interval. Both NaN when the engine is not rated yet.
	Elo, Error          float64
	Games               int64
	Wins, Draws, Losses int64
	Points              float64
}

// RatingTable is a tournament's standings as ratings, best first.
type RatingTable struct {
	Rows []RatingRow
	// Anchor is the engine held at 0, or "" when the ratings average 0.
	Anchor string
	// Prior: some engine won or lost every game, so one virtual draw per
	// pairing keeps the ratings finite.
	Prior bool
}

// Ratings fits the rating table to the standings: a gauntlet with one seed
// is rated against the seed; anything else around the mean.
func (s *Standings) Ratings() RatingTable {
	n := len(s.Engines)
	var ps []pairingScore
	rows := make([]RatingRow, n)
	for i := range rows {
		rows[i].Name = s.Engines[i]
	}
	for _, p := range s.Pairings {
		ps = append(ps, p.score())
		g := p.Wins + p.Draws + p.Losses
		a, b := &rows[p.A], &rows[p.B]
		a.Games += g
		b.Games += g
		a.Wins, a.Draws, a.Losses = a.Wins+p.Wins, a.Draws+p.Draws, a.Losses+p.Losses
		b.Wins, b.Draws, b.Losses = b.Wins+p.Losses, b.Draws+p.Draws, b.Losses+p.Wins
	}
	anchor := -1
	t := RatingTable{}
	if s.Schedule.Kind == Gauntlet && s.Schedule.Seeds == 1 {
		anchor = 0
		t.Anchor = s.Engines[0]
	}
	fit := fitRatings(n, ps, anchor)
	t.Prior = fit.prior
	for i := range rows {
		rows[i].Points = float64(rows[i].Wins) + float64(rows[i].Draws)/2
		rows[i].Elo, rows[i].Error = fit.elo[i], fit.err95[i]
	}
	sort.SliceStable(rows, func(i, k int) bool {
		a, b := rows[i].Elo, rows[k].Elo
		switch {
		case math.IsNaN(a) || math.IsNaN(b):
			return !math.IsNaN(a) && math.IsNaN(b)
		}
		return a > b
	})
	t.Rows = rows
	return t
}

// String renders the table in the layout of cutechess-cli's and
// fastchess's, with the anchor and the prior said below it.
func (t RatingTable) String() string {
	w := len("Name")
	for _, r := range t.Rows {
		w = max(w, len(r.Name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Rank %-*s %8s %7s %7s %7s %7s\n", w, "Name", "Elo", "+/-", "Games", "Score", "Draw")
	for i, r := range t.Rows {
		elo, err := "-", "-"
		if !math.IsNaN(r.Elo) {
			elo = fmt.Sprintf("%.1f", r.Elo)
			if r.Name == t.Anchor {
				err = "anchor"
			} else {
				err = fmt.Sprintf("%.1f", r.Error)
			}
		}
		score, draw := "-", "-"
		if r.Games > 0 {
			score = fmt.Sprintf("%.1f%%", 100*r.Points/float64(r.Games))
			draw = fmt.Sprintf("%.1f%%", 100*float64(r.Draws)/float64(r.Games))
		}
		fmt.Fprintf(&b, "%4d %-*s %8s %7s %7d %7s %7s\n", i+1, w, r.Name, elo, err, r.Games, score, draw)
	}
	if t.Anchor != "" {
		fmt.Fprintf(&b, "Elo relative to %s; +/- is the 95%% interval.\n", t.Anchor)
	} else {
		b.WriteString("Elo relative to the average (maximum likelihood); +/- is the 95% interval.\n")
	}
	if t.Prior {
		b.WriteString("An engine won or lost all its games: one virtual draw per pairing keeps the ratings finite.\n")
	}
	return b.String()
}

// score is the pairing as the fit sees it.
func (p *PairingResult) score() pairingScore {
	g := float64(p.Wins + p.Draws + p.Losses)
	s := pairingScore{a: p.A, b: p.B, games: g, points: float64(p.Wins) + float64(p.Draws)/2,
		sumSq: float64(p.Wins) + float64(p.Draws)/4}
	if n := p.Penta.Pairs(); n > 0 {
		mean := 0.0
		for k, c := range p.Penta {
			mean += float64(c) * float64(k) / 4
		}
		mean /= float64(n)
		v := 0.0
		for k, c := range p.Penta {
			d := float64(k)/4 - mean
			v += float64(c) * d * d
		}
		s.pairVar, s.pairs = v/float64(n), float64(n)
	}
	return s
}

// Results are the pairing's counts for the SPRT and fastchess's report,
// from A's side: with the pentanomial when every game is paired.
func (p *PairingResult) Results() sprt.Results {
	r := sprt.Results{Wins: p.Wins, Draws: p.Draws, Losses: p.Losses}
	if n := p.Penta.Pairs(); n > 0 && 2*n == p.Wins+p.Draws+p.Losses {
		pen := p.Penta
		r.Pentanomial = &pen
	}
	return r
}
