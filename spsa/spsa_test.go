package spsa

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// synthetic is a "match" whose expected score is a known smooth function of
// the parameters: engine strength is −Σ s·(x_i − opt_i)² Elo, a game's
// expected score is the logistic of the Elo difference, and each game is
// drawn at random (draws up to 40%) from a stream fixed by the batch.
type synthetic struct {
	opt  []float64
	s    float64 // Elo per unit² of distance
	seed uint64
}

func (m *synthetic) elo(x []float64) float64 {
	e := 0.0
	for i, v := range x {
		e -= m.s * (v - m.opt[i]) * (v - m.opt[i])
	}
	return e
}

// play returns engine A's wins and losses in 2×pairs games of a against b.
func (m *synthetic) play(batch int, a, b []float64, pairs int) (wins, losses int) {
	p := 1 / (1 + math.Pow(10, -(m.elo(a)-m.elo(b))/400))
	d := min(0.4, 2*min(p, 1-p))
	rng := rand.New(rand.NewPCG(m.seed, uint64(batch)))
	for range 2 * pairs {
		switch u := rng.Float64(); {
		case u < p-d/2:
			wins++
		case u < p+d/2:
		default:
			losses++
		}
	}
	return wins, losses
}

// fourParams is a tune of four integer parameters on [0, 200] starting far
// from the synthetic optimum (120, 40, 75, 160).
func fourParams() ([]Param, *synthetic) {
	ps := []Param{
		{Name: "A", Start: 10, Min: 0, Max: 200, CEnd: 10, REnd: 0.002},
		{Name: "B", Start: 190, Min: 0, Max: 200, CEnd: 10, REnd: 0.002},
		{Name: "C", Start: 180, Min: 0, Max: 200, CEnd: 10, REnd: 0.002},
		{Name: "D", Start: 30, Min: 0, Max: 200, CEnd: 10, REnd: 0.002},
	}
	// 100 units from the optimum cost 400 Elo: 10 units cost 4 Elo, about
	// what a real parameter's c_end is chosen to show.
	return ps, &synthetic{opt: []float64{120, 40, 75, 160}, s: 0.04, seed: 99}
}

func config(ps []Param, pairs, batch int, seed uint64) Config {
	return Config{Params: ps, Pairs: pairs, BatchPairs: batch, Alpha: DefaultAlpha, Gamma: DefaultGamma, ARatio: DefaultARatio, Seed: seed}
}

// runSequential plays every batch in order from the current θ and returns
// the tune.
func runSequential(t *testing.T, cfg Config, m *synthetic) *Tune {
	t.Helper()
	tu, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for b := range cfg.Batches() {
		p, err := tu.Perturbation(b)
		if err != nil {
			t.Fatal(err)
		}
		a, bb, err := tu.Sides(p)
		if err != nil {
			t.Fatal(err)
		}
		_, n := cfg.BatchRange(b)
		w, l := m.play(b, a, bb, n)
		if err := tu.Apply(b, w, l); err != nil {
			t.Fatal(err)
		}
	}
	return tu
}

// The schedule is Fishtest's (spsa_workflow.parse_spsa_params and
// build_spsa_worker_step), written out here independently.
func TestScheduleIsFishtests(t *testing.T) {
	ps := []Param{{Name: "X", Start: 50, Min: 0, Max: 100, CEnd: 4, REnd: 0.0025}}
	cfg := config(ps, 1000, 10, 1)
	tu, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const N, A = 1000.0, 100.0 // A = int(0.1 × num_games / 2)
	c := 4 * math.Pow(N, DefaultGamma)
	a := 0.0025 * 16 * math.Pow(A+N, DefaultAlpha)
	if tu.A() != A {
		t.Fatalf("A = %v, want %v", tu.A(), A)
	}
	for _, b := range []int{0, 1, 37, 99} {
		p, err := tu.Perturbation(b)
		if err != nil {
			t.Fatal(err)
		}
		iter := float64(b*10) + 1
		ck := c / math.Pow(iter, DefaultGamma)
		rk := a / math.Pow(A+iter, DefaultAlpha) / (ck * ck)
		if p.K != b*10 || !close(p.C[0], ck, 1e-12) || !close(p.R[0], rk, 1e-12) {
			t.Errorf("batch %d: k %d c %v R %v, want %d %v %v", b, p.K, p.C[0], p.R[0], b*10, ck, rk)
		}
	}
	// At the end c_k has come down to c_end and R to r_end.
	cEnd, rEnd := tu.Step(1000 - 1)
	if !close(cEnd[0], 4, 1e-9) || !close(rEnd[0], 0.0025, 1e-9) {
		t.Errorf("end of schedule: c %v r %v, want 4 and 0.0025", cEnd[0], rEnd[0])
	}
	// One update is θ += R·c·(W−L)·Δ (Fishtest's apply_spsa_result_updates).
	p, _ := tu.Perturbation(3)
	if err := tu.Apply(3, 7, 2); err != nil {
		t.Fatal(err)
	}
	want := 50 + p.R[0]*p.C[0]*5*float64(p.Flip[0])
	if got := tu.Theta()[0]; !close(got, want, 1e-14) || tu.Updates() != 1 || tu.PairsApplied() != 10 {
		t.Errorf("after one update: θ %v (want %v), %d updates, %d pairs", got, want, tu.Updates(), tu.PairsApplied())
	}
}

func close(x, y, rel float64) bool { return math.Abs(x-y) <= rel*math.Max(math.Abs(x), math.Abs(y)) }

// A batch's perturbation depends on the seed and the batch only; the
// values engines get are in range, integers for integer parameters, and
// rounded without bias.
func TestPerturbations(t *testing.T) {
	ps, _ := fourParams()
	ps = append(ps, Param{Name: "F", Float: true, Start: 0.5, Min: 0, Max: 1, CEnd: 0.05, REnd: 0.01})
	cfg := config(ps, 20000, 8, 42)
	t1, _ := New(cfg)
	t2, _ := New(cfg)
	p1, _ := t1.Perturbation(17)
	p2, _ := t2.Perturbation(17)
	a1, b1, _ := t1.Sides(p1)
	a2, b2, _ := t2.Sides(p2)
	if !equal(a1, a2) || !equal(b1, b2) || !equalInts(p1.Flip, p2.Flip) {
		t.Fatalf("batch 17 differs between two tunes of one seed: %v %v / %v %v", a1, b1, a2, b2)
	}
	other, _ := New(config(ps, 20000, 8, 43))
	differ := 0
	for b := range 64 {
		x, _ := t1.Perturbation(b)
		y, _ := other.Perturbation(b)
		if !equalInts(x.Flip, y.Flip) {
			differ++
		}
	}
	if differ < 50 {
		t.Errorf("another seed changed the signs of only %d of 64 batches", differ)
	}
	if _, err := t1.Perturbation(cfg.Batches()); err == nil {
		t.Error("a batch past the end has a perturbation")
	}
	// Integer sides are integers within range, and their mean over many
	// batches is θ ± c_k·Δ (stochastic rounding adds no bias; θ mid-range,
	// so that no side is clamped).
	mid := append([]Param(nil), ps...)
	for i := range mid[:4] {
		mid[i].Start = 100
	}
	tm, _ := New(config(mid, 20000, 8, 42))
	sum := make([]float64, len(mid))
	const n = 2500
	for b := range n {
		p, _ := tm.Perturbation(b)
		a, bb, err := tm.Sides(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, par := range mid {
			for _, v := range []float64{a[i], bb[i]} {
				if v < par.Min || v > par.Max || (!par.Float && v != math.Floor(v)) {
					t.Fatalf("batch %d: %s = %v", b, par.Name, v)
				}
			}
			sum[i] += a[i] - (par.Start + p.C[i]*float64(p.Flip[i]))
		}
	}
	for i := range mid {
		if bias := sum[i] / n; math.Abs(bias) > 0.02 {
			t.Errorf("%s: rounding bias %v", mid[i].Name, bias)
		}
	}
	// θ at a bound: the sides are clamped into the range.
	edge := []Param{{Name: "E", Start: 200, Min: 0, Max: 200, CEnd: 10, REnd: 0.002}}
	te, _ := New(config(edge, 100, 1, 1))
	for b := range 100 {
		p, _ := te.Perturbation(b)
		a, bb, _ := te.Sides(p)
		if a[0] > 200 || bb[0] > 200 {
			t.Fatalf("sides %v %v past max 200", a, bb)
		}
	}
}

func equal(x, y []float64) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func equalInts(x, y []int) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// The tolerance SPSA is held to on the synthetic match: every parameter
// ends within convergeTolerance of the hidden optimum (5% of its range)
// and at least convergeGain of its start's distance closer.
const (
	convergeTolerance = 10.0
	convergeGain      = 0.85
)

func checkConverged(t *testing.T, what string, ps []Param, m *synthetic, theta []float64) {
	t.Helper()
	for i, p := range ps {
		start, end := math.Abs(p.Start-m.opt[i]), math.Abs(theta[i]-m.opt[i])
		if end > convergeTolerance || end > (1-convergeGain)*start {
			t.Errorf("%s: %s went from %v to %v; the optimum is %v", what, p.Name, p.Start, theta[i], m.opt[i])
		}
	}
}

// SPSA from a distant start moves every parameter to the optimum of the
// synthetic match, and a seed fixes the whole tune.
func TestConvergesOnSyntheticMatch(t *testing.T) {
	ps, m := fourParams()
	cfg := config(ps, 40000, 8, 7)
	first := runSequential(t, cfg, m)
	checkConverged(t, "sequential", ps, m, first.Theta())
	t.Logf("θ after %d updates: %.2f (optimum %v)", first.Updates(), first.Theta(), m.opt)
	again := runSequential(t, cfg, m)
	if !equal(first.Theta(), again.Theta()) {
		t.Fatalf("one seed, two tunes: %v and %v", first.Theta(), again.Theta())
	}
	if first.Updates() != cfg.Batches() || first.PairsApplied() != cfg.Pairs {
		t.Errorf("%d updates over %d pairs, want %d over %d", first.Updates(), first.PairsApplied(), cfg.Batches(), cfg.Pairs)
	}
}

// Batches handed out in order to several workers land in another order:
// the tune still converges, and the recorded order reproduces θ exactly.
func TestOutOfOrderArrivalReplays(t *testing.T) {
	ps, m := fourParams()
	cfg := config(ps, 40000, 8, 7)
	tu, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	type inflight struct {
		b    int
		w, l int
	}
	rng := rand.New(rand.NewPCG(5, 5))
	var pending []inflight
	var order []Update
	next := 0
	for next < cfg.Batches() || len(pending) > 0 {
		// Up to 6 batches out at once, played from θ when handed out.
		for len(pending) < 6 && next < cfg.Batches() {
			p, _ := tu.Perturbation(next)
			a, b, _ := tu.Sides(p)
			_, n := cfg.BatchRange(next)
			w, l := m.play(next, a, b, n)
			pending = append(pending, inflight{next, w, l})
			next++
		}
		i := rng.IntN(len(pending))
		in := pending[i]
		pending = append(pending[:i], pending[i+1:]...)
		if err := tu.Apply(in.b, in.w, in.l); err != nil {
			t.Fatal(err)
		}
		order = append(order, Update{Batch: in.b, Wins: in.w, Losses: in.l})
	}
	checkConverged(t, "out of order", ps, m, tu.Theta())
	inOrder := 0
	for i, u := range order {
		if u.Batch == i {
			inOrder++
		}
	}
	if inOrder > len(order)/2 {
		t.Fatalf("%d of %d batches landed in order: not a test of arrival order", inOrder, len(order))
	}
	re, err := Replay(cfg, order)
	if err != nil {
		t.Fatal(err)
	}
	if !equal(re.Theta(), tu.Theta()) {
		t.Fatalf("replay of the recorded order: %v, the tune: %v", re.Theta(), tu.Theta())
	}
	// Another order of the same results is another tune: an update does
	// not depend on θ, but where θ met a bound (A starts near its min, B
	// near its max) the order decides what was clamped.
	swapped := append([]Update(nil), order...)
	swapped[0], swapped[len(swapped)-1] = swapped[len(swapped)-1], swapped[0]
	if other, _ := Replay(cfg, swapped); equal(other.Theta(), tu.Theta()) {
		t.Error("swapping the first and last update changed nothing: the order is not what replay follows")
	}
}

// Bad designs are refused with the field named.
func TestConfigRefusals(t *testing.T) {
	ps, _ := fourParams()
	cases := []struct {
		want string
		mut  func(c *Config)
	}{
		{"pairs 0", func(c *Config) { c.Pairs = 0 }},
		{"batch pairs 0", func(c *Config) { c.BatchPairs = 0 }},
		{"batch pairs 200", func(c *Config) { c.Pairs, c.BatchPairs = 100, 200 }},
		{"alpha", func(c *Config) { c.Alpha = math.NaN() }},
		{"gamma", func(c *Config) { c.Gamma = -1 }},
		{"A ratio", func(c *Config) { c.ARatio = 1e9 }},
		{"alpha 3: want a number from 0 to 2", func(c *Config) { c.Alpha = 3 }},
		{"params: none", func(c *Config) { c.Params = nil }},
		{`param "A": min 300 > max 200`, func(c *Config) { c.Params[0].Min = 300 }},
		{`param "B": start 250 is outside`, func(c *Config) { c.Params[1].Start = 250 }},
		{`param "C": c_end 0 must be positive`, func(c *Config) { c.Params[2].CEnd = 0 }},
		{`param "D": r_end -1 must be positive`, func(c *Config) { c.Params[3].REnd = -1 }},
		{`param "A": start +Inf`, func(c *Config) { c.Params[0].Start = math.Inf(1) }},
		{`param "a": named twice`, func(c *Config) { c.Params[1].Name = "a" }},
		{"holds no integer", func(c *Config) { c.Params[0].Min, c.Params[0].Max, c.Params[0].Start = 0.2, 0.8, 0.5 }},
		{"name missing", func(c *Config) { c.Params[0].Name = " " }},
		{"comma", func(c *Config) { c.Params[0].Name = "a,b" }},
		{"at most 100 bytes", func(c *Config) { c.Params[0].Name = strings.Repeat("x", 300) }},
	}
	for _, c := range cases {
		cfg := config(append([]Param(nil), ps...), 1000, 10, 1)
		c.mut(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		} else if len(err.Error()) > 300 {
			t.Errorf("%s: a %d-byte error", c.want, len(err.Error()))
		}
	}
	// A c_end so small that c_k² underflows still updates (by nothing).
	tiny, _ := New(config([]Param{{Name: "T", Start: 1, Min: 0, Max: 2, CEnd: 1e-200, REnd: 1}}, 1000, 10, 1))
	if err := tiny.Apply(0, 5, 5); err != nil || tiny.Theta()[0] != 1 {
		t.Errorf("tiny c_end: %v, θ %v", err, tiny.Theta())
	}
	tu, _ := New(config(ps, 1000, 10, 1))
	if err := tu.Apply(0, 15, 6); err == nil {
		t.Error("21 decisive games in a batch of 20 applied")
	}
	if err := tu.Apply(100, 1, 0); err == nil {
		t.Error("batch 100 of 100 applied")
	}
	if tu.Updates() != 0 {
		t.Errorf("%d updates after refusals", tu.Updates())
	}
}
