package sprt

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pentaAtScore is a realistic pentanomial distribution (an STC-like
// spread, draws of pairs most likely) tilted exponentially until its mean
// pair score / 2 is score.
func pentaAtScore(t *testing.T, score float64) [5]float64 {
	t.Helper()
	base := [5]float64{0.015, 0.19, 0.59, 0.19, 0.015}
	at := func(tau float64) ([5]float64, float64) {
		var p [5]float64
		var z, mean float64
		for j := range p {
			p[j] = base[j] * math.Exp(tau*float64(j)/4)
			z += p[j]
		}
		for j := range p {
			p[j] /= z
			mean += p[j] * float64(j) / 4
		}
		return p, mean
	}
	lo, hi := -20.0, 20.0
	for range 200 {
		mid := (lo + hi) / 2
		if _, m := at(mid); m < score {
			lo = mid
		} else {
			hi = mid
		}
	}
	p, m := at(lo)
	if math.Abs(m-score) > 1e-12 {
		t.Fatalf("tilt found mean %g, want %g", m, score)
	}
	return p
}

// drawPairs adds n pairs drawn from p to penta.
func drawPairs(rng *rand.Rand, p [5]float64, n int, penta *Pentanomial) {
	for range n {
		u := rng.Float64()
		j := 0
		for j < 4 && u >= p[j] {
			u -= p[j]
			j++
		}
		penta[j]++
	}
}

func scoreOf(elo float64) float64 { return 1 / (1 + math.Pow(10, -elo/400)) }

func TestAnytimeIntervalHoldsTheMeanAndIsWiderThanTheFixedOne(t *testing.T) {
	for _, penta := range []Pentanomial{
		{10, 200, 600, 210, 12},
		{0, 3, 10, 5, 0},
		{300, 3000, 9000, 3100, 310},
	} {
		r := Results{Pentanomial: &penta}
		a, err := AnytimeInterval(r, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		n := float64(penta.Pairs())
		mean := float64(penta[1]+2*penta[2]+3*penta[3]+4*penta[4]) / (4 * n)
		if !(a.Score[0] <= mean && mean <= a.Score[1]) {
			t.Errorf("%v: score interval %v misses the sample mean %g", penta, a.Score, mean)
		}
		fixed := FixedGamesElo(r)
		if !(a.Elo[0] <= fixed.CI95[0] && fixed.CI95[1] <= a.Elo[1]) {
			t.Errorf("%v: anytime %v is not wider than the fixed-games interval %v", penta, a.Elo, fixed.CI95)
		}
		if !(a.NElo[0] < a.NElo[1]) {
			t.Errorf("%v: nElo interval %v is empty", penta, a.NElo)
		}
		t.Logf("%v: fixed Elo %.2f [%.2f, %.2f], anytime [%.2f, %.2f], nElo [%.2f, %.2f]", penta,
			fixed.Elo, fixed.CI95[0], fixed.CI95[1], a.Elo[0], a.Elo[1], a.NElo[0], a.NElo[1])
	}
	empty, err := AnytimeInterval(Results{Pentanomial: &Pentanomial{}}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Score != [2]float64{0, 1} {
		t.Errorf("no pairs: score interval %v, want [0, 1]", empty.Score)
	}
}

// TestAnytimeIntervalIsTheWholeSequence checks the interval's search: no
// score outside [low, high] has wealth below 1/α (the search walks out
// from the mean and would miss a second piece of the sequence).
func TestAnytimeIntervalIsTheWholeSequence(t *testing.T) {
	for _, counts := range [][]int64{{10, 200, 600, 210, 12}, {0, 3, 10, 5, 0}, {40, 10, 55}} {
		var r Results
		if len(counts) == 5 {
			p := Pentanomial(counts)
			r.Pentanomial = &p
		} else {
			r.Losses, r.Draws, r.Wins = counts[0], counts[1], counts[2]
		}
		a, err := AnytimeInterval(r, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		w := wealth{counts: counts}
		threshold := math.Log(20)
		for i := 1; i < 2000; i++ {
			m := float64(i) / 2000
			in := w.logCapital(m) < threshold
			if in && (m < a.Score[0] || m > a.Score[1]) {
				t.Errorf("%v: score %g is in the sequence but outside %v", counts, m, a.Score)
			}
		}
		// The control: the endpoints really are the sequence's edges.
		if a.Score[0] > 0 && w.logCapital(a.Score[0]-1e-4) < threshold {
			t.Errorf("%v: just below the low end %g is still inside", counts, a.Score[0])
		}
		if a.Score[1] < 1 && w.logCapital(a.Score[1]+1e-4) < threshold {
			t.Errorf("%v: just above the high end %g is still inside", counts, a.Score[1])
		}
	}
}

func TestAnytimeIntervalRefusesBadInput(t *testing.T) {
	if _, err := AnytimeInterval(Results{Pentanomial: &Pentanomial{-1, 0, 0, 0, 0}}, 0.95); err == nil {
		t.Error("negative count accepted")
	}
	for _, level := range []float64{0, 1, math.NaN(), -0.5} {
		if _, err := AnytimeInterval(Results{Wins: 1}, level); err == nil {
			t.Errorf("level %g accepted", level)
		}
	}
	for _, w := range []float64{0, -1, math.NaN(), math.Inf(1), 1001} {
		if err := CheckPrecision("--stop precision", w); err == nil {
			t.Errorf("precision %g accepted", w)
		}
	}
	if err := CheckPrecision("--stop precision", 10); err != nil {
		t.Errorf("precision 10 refused: %v", err)
	}
}

// TestAnytimeCoverageUnderOptionalStopping simulates 1,000 tests of a
// change worth exactly 0 Elo, looked at after every batch of 50 pairs by
// an author who stops as soon as Fishtest's fixed-games interval excludes
// 0 ("it is significant"), or at a cap drawn at random between 1,000 and
// 10,000 pairs. The fixed-games interval's coverage of the true Elo then
// falls below its stated 95%; the anytime interval's stays above it.
func TestAnytimeCoverageUnderOptionalStopping(t *testing.T) {
	const (
		tests      = 1000
		batchPairs = 50
		trueElo    = 0.0
	)
	p := pentaAtScore(t, scoreOf(trueElo))
	rng := rand.New(rand.NewPCG(45, 3))
	var fixedCovers, anytimeCovers, stoppedEarly int
	for range tests {
		capBatches := 20 + rng.IntN(181)
		var penta Pentanomial
		for b := 0; b < capBatches; b++ {
			drawPairs(rng, p, batchPairs, &penta)
			fixed := FixedGamesElo(Results{Pentanomial: &penta})
			if fixed.CI95[0] > trueElo || fixed.CI95[1] < trueElo {
				stoppedEarly++
				break
			}
		}
		r := Results{Pentanomial: &penta}
		fixed := FixedGamesElo(r)
		if fixed.CI95[0] <= trueElo && trueElo <= fixed.CI95[1] {
			fixedCovers++
		}
		a, err := AnytimeInterval(r, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if a.Elo[0] <= trueElo && trueElo <= a.Elo[1] {
			anytimeCovers++
		}
	}
	fixedRate, anytimeRate := float64(fixedCovers)/tests, float64(anytimeCovers)/tests
	t.Logf("%d tests at %g Elo, %d stopped early by hand: fixed-games 95%% interval covers %.1f %%, anytime-valid 95%% interval covers %.1f %%",
		tests, trueElo, stoppedEarly, 100*fixedRate, 100*anytimeRate)
	if anytimeRate < 0.95 {
		t.Errorf("anytime interval covers %.3f, below its stated 0.95", anytimeRate)
	}
	// The control: this stopping rule does break the fixed-games interval,
	// so the simulation can tell a valid interval from an invalid one.
	if fixedRate >= 0.95 {
		t.Errorf("fixed-games interval covers %.3f under optional stopping: the simulation does not stop adversarially enough to tell", fixedRate)
	}
}

// expectedPrecisionPairs is the number of pairs at which the anytime
// interval of the expected counts (n·p, rounded) first gets narrower than
// width Elo: the deterministic prediction of a --stop precision= run.
func expectedPrecisionPairs(t *testing.T, p [5]float64, width float64) int {
	t.Helper()
	narrow := func(n int) bool {
		var penta Pentanomial
		for j := range penta {
			penta[j] = int64(math.Round(float64(n) * p[j]))
		}
		a, err := AnytimeInterval(Results{Pentanomial: &penta}, DefaultAnytimeLevel)
		if err != nil {
			t.Fatal(err)
		}
		return a.Width() < width
	}
	lo, hi := 1, 1<<24
	for lo < hi {
		mid := (lo + hi) / 2
		if narrow(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// TestPrecisionStopEndsNearTheExpectedGames runs 40 simulated tests at
// +5 Elo with --stop precision=10, looked at every 200 pairs, and checks
// that each ends within 20 % of the pairs the variance predicts (and the
// median within 5 %).
func TestPrecisionStopEndsNearTheExpectedGames(t *testing.T) {
	const (
		runs       = 40
		batchPairs = 200
		width      = 10.0
	)
	p := pentaAtScore(t, scoreOf(5))
	want := expectedPrecisionPairs(t, p, width)
	var variance, mean float64
	for j, pj := range p {
		mean += pj * float64(j) / 4
	}
	for j, pj := range p {
		variance += pj * (float64(j)/4 - mean) * (float64(j)/4 - mean)
	}
	rng := rand.New(rand.NewPCG(45, 10))
	stops := make([]int, 0, runs)
	for range runs {
		var penta Pentanomial
		for {
			drawPairs(rng, p, batchPairs, &penta)
			done, _, err := PrecisionReached(Results{Pentanomial: &penta}, width, DefaultAnytimeLevel)
			if err != nil {
				t.Fatal(err)
			}
			if done {
				break
			}
			if penta.Pairs() > int64(10*want) {
				t.Fatalf("no stop after %d pairs (expected %d)", penta.Pairs(), want)
			}
		}
		stops = append(stops, int(penta.Pairs()))
	}
	slices.Sort(stops)
	median := stops[runs/2]
	t.Logf("pair score variance %.4f: expected stop at %d pairs (%d games); %d runs stopped between %d and %d pairs, median %d",
		variance, want, 2*want, runs, stops[0], stops[runs-1], median)
	for _, s := range stops {
		if float64(s) < 0.8*float64(want) || float64(s) > 1.2*float64(want) {
			t.Errorf("a run stopped at %d pairs, outside 20 %% of the expected %d", s, want)
		}
	}
	if math.Abs(float64(median-want)) > 0.05*float64(want) {
		t.Errorf("median stop %d pairs is not within 5 %% of the expected %d", median, want)
	}
}

// TestTakeParamsSplitAlpha checks the Bonferroni split: with three takes of
// a change worth exactly elo0, simulated SPRTs at the family's α pass
// more often than α, at α/3 each no more than α together.
func TestTakeParamsSplitAlpha(t *testing.T) {
	family := Params{Alpha: 0.05, Beta: 0.05, Elo0: 0, Elo1: 10, Model: Logistic}
	take, err := TakeParams(family, 3)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(take.Alpha-0.05/3) > 1e-15 || take.Beta != 0.05 {
		t.Fatalf("take params %+v", take)
	}
	for _, n := range []int{0, MaxTakes + 1} {
		if _, err := TakeParams(family, n); err == nil {
			t.Errorf("%d takes accepted", n)
		}
	}
	p := pentaAtScore(t, scoreOf(0))
	rng := rand.New(rand.NewPCG(45, 4))
	// passes plays one SPRT to a bound, 100 pairs a look.
	passes := func(params Params) bool {
		lower, upper := params.Bounds()
		var penta Pentanomial
		for {
			drawPairs(rng, p, 100, &penta)
			llr, err := LLR(params, Results{Pentanomial: &penta})
			if err != nil {
				t.Fatal(err)
			}
			if llr >= upper || llr <= lower {
				return llr >= upper
			}
		}
	}
	anyPasses := func(params Params, groups int) float64 {
		passed := 0
		for range groups {
			if passes(params) || passes(params) || passes(params) {
				passed++
			}
		}
		return float64(passed) / float64(groups)
	}
	const groups = 1000
	naive, split := anyPasses(family, groups), anyPasses(take, groups)
	t.Logf("%d groups of 3 takes of a 0 Elo change: some take passes in %.1f %% at alpha 0.05 each, %.1f %% at alpha 0.05/3",
		groups, 100*naive, 100*split)
	if split > 0.05 {
		t.Errorf("with the split, some take passed in %.3f of the groups, above alpha 0.05", split)
	}
	if naive <= 0.05 {
		t.Errorf("the control: without the split some take passed in only %.3f of the groups; the simulation cannot tell", naive)
	}
}

// BenchmarkAnytimeInterval is the cost of one interval (a status, a page,
// a batch's precision check) at a long test's counts.
func BenchmarkAnytimeInterval(b *testing.B) {
	penta := Pentanomial{3000, 30000, 90000, 31000, 3100}
	r := Results{Pentanomial: &penta}
	for b.Loop() {
		if _, err := AnytimeInterval(r, DefaultAnytimeLevel); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLogCapitalAgreesWithABruteForceIntegral checks the windowed integral
// against a plain sum over 400,001 points of the bet fraction.
func TestLogCapitalAgreesWithABruteForceIntegral(t *testing.T) {
	for _, counts := range [][]int64{{10, 200, 600, 210, 12}, {0, 3, 10, 5, 0}, {40, 10, 55}, {300, 3000, 9000, 3100, 310}} {
		w := wealth{counts: counts}
		for _, m := range []float64{0.3, 0.45, 0.49, 0.5, 0.51, 0.55, 0.7} {
			const n = 400_000
			logs := make([]float64, 0, 2*n+1)
			for i := -n; i <= n; i++ {
				theta := float64(i) / n
				lambda := theta / m
				if theta < 0 {
					lambda = theta / (1 - m)
				}
				v, _ := w.at(m, lambda)
				logs = append(logs, v)
			}
			peak := slices.Max(logs)
			var sum float64
			for i, v := range logs {
				f := math.Exp(v - peak)
				if i == 0 || i == len(logs)-1 {
					f /= 2
				}
				sum += f
			}
			brute := peak + math.Log(0.5*sum/n)
			if got := w.logCapital(m); math.Abs(got-brute) > 1e-3 && !(math.IsInf(got, -1) && math.IsInf(brute, -1)) {
				t.Errorf("%v at m=%g: log capital %g, brute force %g", counts, m, got, brute)
			}
		}
	}
}
