package match

import (
	"math"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/sprt"
)

// The estimator against cases worked out by hand. Elo(s) = 400 log10(s/(1-s))
// is the rating difference that makes s the expected score; its delta-
// method standard error for n games of per-game score variance v is
// sqrt(v/n) * dElo/ds, dElo/ds = 400 / (ln 10 * s (1-s)).

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.6f, want %.6f (±%g)", what, got, want, tol)
	}
}

func wdl(a, b int, w, d, l int64) pairingScore {
	p := PairingResult{A: a, B: b, Wins: w, Draws: d, Losses: l}
	return p.score()
}

func eloOf(s float64) float64 { return 400 * math.Log10(s/(1-s)) }

func TestRatingsTwoEngines(t *testing.T) {
	// 60 wins, 30 draws, 10 losses: 75 of 100 points.
	fit := fitRatings(2, []pairingScore{wdl(0, 1, 60, 30, 10)}, -1)
	d := eloOf(0.75) // 400 log10 3 = 190.8485...
	near(t, "400 log10 3", d, 190.848501887865, 1e-9)
	near(t, "A", fit.elo[0], d/2, 1e-6)
	near(t, "B", fit.elo[1], -d/2, 1e-6)
	// Per-game variance: (60*.25² + 30*.25² + 10*.75²)/100 = 0.1125.
	// SE(d) = sqrt(0.1125/100) * 400/(ln10 * .1875) = 31.0757...; each
	// engine, held about the mean, carries half of it.
	se := math.Sqrt(0.1125/100) * 400 / (math.Ln10 * 0.75 * 0.25)
	near(t, "SE of the difference", se, 31.07568, 1e-4)
	near(t, "A ±", fit.err95[0], z95*se/2, 1e-6)
	near(t, "B ±", fit.err95[1], z95*se/2, 1e-6)
	if fit.prior {
		t.Error("prior used for a finite fit")
	}

	// Anchored at B: A carries the whole difference and its whole error.
	fit = fitRatings(2, []pairingScore{wdl(0, 1, 60, 30, 10)}, 1)
	near(t, "A vs anchor", fit.elo[0], d, 1e-6)
	near(t, "anchor", fit.elo[1], 0, 0)
	near(t, "A ± vs anchor", fit.err95[0], z95*se, 1e-6)
	near(t, "anchor ±", fit.err95[1], 0, 0)
}

// Paired games: the error bar comes from the pairs. Pentanomial [0, 10,
// 20, 10, 0], the 20 one-point pairs a win and a loss each (30 wins, 20
// draws, 30 losses): score 0.5, Elo 0; variance of a pair's mean (pair
// means 0.25, 0.5, 0.75) (10*.25² + 10*.25²)/40 = 0.03125, per game 0.0625,
// where the same games unpaired give (30*.25 + 30*.25)/80 = 0.1875; n = 80:
// SE = sqrt(v/80) * 400/(ln10 * .25).
func TestRatingsPaired(t *testing.T) {
	p := PairingResult{A: 0, B: 1, Wins: 30, Draws: 20, Losses: 30, Penta: sprt.Pentanomial{0, 10, 20, 10, 0}}
	fit := fitRatings(2, []pairingScore{p.score()}, 1)
	near(t, "Elo", fit.elo[0], 0, 1e-9)
	se := math.Sqrt(0.0625/80) * 400 / (math.Ln10 * 0.25)
	near(t, "paired ±", fit.err95[0], z95*se, 1e-6)
	unpaired := PairingResult{A: 0, B: 1, Wins: 30, Draws: 20, Losses: 30}
	fit = fitRatings(2, []pairingScore{unpaired.score()}, 1)
	near(t, "unpaired ±", fit.err95[0], z95*math.Sqrt(0.1875/80)*400/(math.Ln10*0.25), 1e-6)
}

// Three engines whose scores fit the model exactly: A-B 75%, B-C 75%, A-C
// 90% (Elo(0.9) = 400 log10 9 = 2 Elo(0.75)). The likelihood equations
// then hold at A = +Elo(.75), B = 0, C = -Elo(.75) around the mean.
func TestRatingsConsistentRoundRobin(t *testing.T) {
	d := eloOf(0.75)
	near(t, "Elo(0.9)", eloOf(0.9), 2*d, 1e-9)
	ps := []pairingScore{wdl(0, 1, 70, 10, 20), wdl(1, 2, 70, 10, 20), wdl(0, 2, 85, 10, 5)}
	fit := fitRatings(3, ps, -1)
	near(t, "A", fit.elo[0], d, 1e-6)
	near(t, "B", fit.elo[1], 0, 1e-6)
	near(t, "C", fit.elo[2], -d, 1e-6)
}

// A cycle (A beats B, B beats C, C beats A, all 75%) is symmetric: all 0.
func TestRatingsCycle(t *testing.T) {
	ps := []pairingScore{wdl(0, 1, 70, 10, 20), wdl(1, 2, 70, 10, 20), wdl(2, 0, 70, 10, 20)}
	fit := fitRatings(3, ps, -1)
	for i := range 3 {
		near(t, "engine", fit.elo[i], 0, 1e-6)
		if !(fit.err95[i] > 0) {
			t.Errorf("engine %d: error %v", i, fit.err95[i])
		}
	}
}

// Not consistent: A-B 60%, B-C 60%, A-C 50%, equal games. By symmetry
// B = 0 and C = -A, and A's likelihood equation (its points equal its
// expected points) is E(A) + E(2A) = 1.1, E(x) the expected score of a
// difference of x Elo. Its root, found once by bisection, is 23.2660...;
// the test checks the equation itself too.
func TestRatingsInconsistent(t *testing.T) {
	ps := []pairingScore{wdl(0, 1, 50, 20, 30), wdl(1, 2, 50, 20, 30), wdl(0, 2, 40, 20, 40)}
	fit := fitRatings(3, ps, -1)
	a := fit.elo[0]
	near(t, "E(A)+E(2A)", expected(a)+expected(2*a), 1.1, 1e-9)
	near(t, "A", a, 23.26602, 1e-4)
	near(t, "B", fit.elo[1], 0, 1e-6)
	near(t, "C", fit.elo[2], -a, 1e-6)
}

// A gauntlet (a star) rated against its seed gives each opponent exactly
// its pairwise Elo: A-B 60% -> B = -Elo(.6) = -70.437..., A-C 30% -> C =
// +Elo(.7) = 147.19...
func TestRatingsGauntlet(t *testing.T) {
	ps := []pairingScore{wdl(0, 1, 50, 20, 30), wdl(0, 2, 20, 20, 60)}
	fit := fitRatings(3, ps, 0)
	near(t, "seed", fit.elo[0], 0, 0)
	near(t, "B", fit.elo[1], -eloOf(0.6), 1e-6)
	near(t, "C", fit.elo[2], eloOf(0.7), 1e-6)
	near(t, "Elo(0.6)", eloOf(0.6), 70.437, 1e-3)
	// Each opponent's error is its own pairing's.
	v := (50*0.4*0.4 + 20*0.1*0.1 + 30*0.6*0.6) / 100
	near(t, "B ±", fit.err95[1], z95*math.Sqrt(v/100)*400/(math.Ln10*0.24), 1e-6)
}

// An engine that won every game has no finite maximum likelihood: one
// virtual draw per pairing gives A-B 10.5/11, so A - B = Elo(10.5/11).
func TestRatingsPrior(t *testing.T) {
	fit := fitRatings(2, []pairingScore{wdl(0, 1, 10, 0, 0)}, 1)
	if !fit.prior {
		t.Fatal("no prior for a 100% score")
	}
	near(t, "A", fit.elo[0], eloOf(10.5/11), 1e-6)
}

// Engines without games, or not connected to the anchor by games, are not
// rated.
func TestRatingsUnrated(t *testing.T) {
	fit := fitRatings(3, []pairingScore{wdl(0, 1, 5, 5, 5)}, -1)
	if !math.IsNaN(fit.elo[2]) || math.IsNaN(fit.elo[0]) {
		t.Errorf("elo %v", fit.elo)
	}
	fit = fitRatings(3, []pairingScore{wdl(1, 2, 5, 5, 5)}, 0)
	for i, e := range fit.elo {
		if !math.IsNaN(e) {
			t.Errorf("engine %d rated %v without games against the anchor", i, e)
		}
	}
}

func TestRatingTableString(t *testing.T) {
	s, err := NewSchedule(3, RoundRobin, 0, 1, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	st := newStandings([]string{"alpha", "beta", "gamma"}, s)
	st.Pairings[0].Wins, st.Pairings[0].Draws, st.Pairings[0].Losses = 70, 10, 20
	st.Pairings[1].Wins, st.Pairings[1].Draws, st.Pairings[1].Losses = 85, 10, 5
	st.Pairings[2].Wins, st.Pairings[2].Draws, st.Pairings[2].Losses = 70, 10, 20
	tab := st.Ratings()
	if tab.Rows[0].Name != "alpha" || tab.Rows[2].Name != "gamma" || tab.Anchor != "" {
		t.Fatalf("%+v", tab)
	}
	out := tab.String()
	for _, want := range []string{"Rank Name", "alpha", "190.8", "-190.8", "200", "average"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
