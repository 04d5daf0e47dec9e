// Package spsa tunes engine parameters by simultaneous perturbation
// stochastic approximation, the way Fishtest runs it ("classic" SPSA,
// server/fishtest/spsa_handler.py and spsa_workflow.py), for the cluster
// (kinds/spsa) and for one machine (Local).
//
// A tune of N game pairs in batches of B pairs has batches 0, 1, ...; batch
// b is the schedule's iteration k = b×B (the pairs before it). It plays
// engine A with θ + c_k·Δ against engine B with θ − c_k·Δ, where Δ is a
// vector of random signs, and its result (A's wins − losses) moves every
// parameter:
//
//	c_k = c / (k+1)^γ              c = c_end × N^γ
//	a_k = a / (A+k+1)^α            a = r_end × c_end² × (A+N)^α,  A = ⌊A_ratio × N⌋
//	θ_i ← clamp(θ_i + a_k/c_k × (W−L) × Δ_i, min_i, max_i)
//
// which is Fishtest's θ += R·c·result·flip with R = a_k/c_k² (computed as
// a_k/c_k, which no tiny c_k can overflow). At the end of
// the tune c_k has shrunk to c_end and a_k/c_k² to r_end. The defaults are
// Fishtest's: α 0.602, γ 0.101, A_ratio 0.1.
//
// Invariants:
//   - A batch's perturbation (k, Δ, and the draws that round integer
//     parameters) is a function of the tune's seed and the batch index
//     alone, so a batch played again (a lost lease, a killed worker) plays
//     the same perturbation, and an update needs nothing but the batch index
//     and its wins and losses.
//   - θ after a sequence of updates is a pure function of the configuration
//     and the sequence (batch index, wins, losses) in the order applied:
//     replaying a recorded order gives the same θ bit for bit (Replay).
//   - θ_i never leaves [min_i, max_i]; the values an engine is given are
//     inside it too, and integers for integer parameters (Fishtest's
//     stochastic rounding, floor(v + u) with u uniform in [0, 1), so the
//     rounding adds no bias).
//   - Bad input is an error naming the parameter and the field, never a
//     panic.
//
// Fishtest takes k as the pairs already counted when a batch is handed out;
// here k is fixed by the batch index, which is the same when batches are
// counted in the order they were handed out and keeps a re-issued batch's
// perturbation unchanged when they are not.
package spsa

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/textcheck"
)

// Fishtest's defaults.
const (
	DefaultAlpha  = 0.602
	DefaultGamma  = 0.101
	DefaultARatio = 0.1
	// DefaultREnd is the r_end Stockfish's TUNE macro prints, used for
	// parameters read from an engine.
	DefaultREnd = 0.002
)

// Limits on a tune.
const (
	// MaxParams bounds the parameters of one tune.
	MaxParams = 1000
	// MaxPairs bounds a tune's game pairs (the cluster's game cap).
	MaxPairs = 50_000_000
	// MaxNameBytes bounds a parameter's name.
	MaxNameBytes = 100
	// MaxAlpha, MaxGamma and MaxARatio keep (A+N)^alpha and N^gamma
	// finite for every tune size (Fishtest's values are 0.602, 0.101 and
	// 0.1).
	MaxAlpha  = 2
	MaxGamma  = 2
	MaxARatio = 10
)

// Param is one parameter of a tune, in Fishtest's and OpenBench's terms.
type Param struct {
	Name string
	// Float is a real-valued parameter (OpenBench's "float"); otherwise the
	// engine is given integers (a UCI spin option).
	Float bool
	Start float64
	Min   float64
	Max   float64
	// CEnd is the perturbation at the end of the tune; REnd is the learning
	// rate there (a_end / c_end²).
	CEnd float64
	REnd float64
}

// Config is a tune's design.
type Config struct {
	Params []Param
	// Pairs is the number of game pairs of the whole tune (Fishtest's
	// num_games / 2).
	Pairs int
	// BatchPairs is the pairs of one batch (one update).
	BatchPairs int
	// Alpha, Gamma and ARatio shape the schedule. Zero is a value here
	// (gamma 0 keeps c_k constant, A ratio 0 drops A): callers fill in
	// DefaultAlpha, DefaultGamma and DefaultARatio.
	Alpha, Gamma, ARatio float64
	// Seed fixes every batch's perturbation.
	Seed uint64
}

// Batches is the number of batches (updates) of the tune.
func (c Config) Batches() int {
	if c.BatchPairs <= 0 {
		return 0
	}
	return (c.Pairs + c.BatchPairs - 1) / c.BatchPairs
}

// BatchRange is the first pair and the pair count of batch b.
func (c Config) BatchRange(b int) (first, n int) {
	first = b * c.BatchPairs
	return first, min(c.BatchPairs, c.Pairs-first)
}

// Validate refuses a design that cannot run, naming the field.
func (c Config) Validate() error {
	if c.Pairs < 1 || c.Pairs > MaxPairs {
		return fmt.Errorf("pairs %d: want 1 to %d", c.Pairs, MaxPairs)
	}
	if c.BatchPairs < 1 || c.BatchPairs > c.Pairs {
		return fmt.Errorf("batch pairs %d: want 1 to the tune's %d pairs", c.BatchPairs, c.Pairs)
	}
	for _, f := range []struct {
		name string
		v    float64
		max  float64
	}{{"alpha", c.Alpha, MaxAlpha}, {"gamma", c.Gamma, MaxGamma}, {"A ratio", c.ARatio, MaxARatio}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > f.max {
			return fmt.Errorf("%s %v: want a number from 0 to %v", f.name, f.v, f.max)
		}
	}
	return CheckParams(c.Params)
}

// CheckParams refuses a parameter list that cannot be tuned: none or too
// many, a bad or repeated name, a field that is not finite, min > max, a
// start outside [min, max], c_end or r_end not positive, an integer
// parameter whose range holds no integer.
func CheckParams(ps []Param) error {
	if len(ps) == 0 {
		return errors.New("params: none given")
	}
	if len(ps) > MaxParams {
		return fmt.Errorf("params: %d, at most %d", len(ps), MaxParams)
	}
	seen := make(map[string]bool, len(ps))
	for i := range ps {
		if err := ps[i].check(); err != nil {
			return err
		}
		key := strings.ToLower(ps[i].Name)
		if seen[key] {
			return fmt.Errorf("param %s: named twice", quote(ps[i].Name))
		}
		seen[key] = true
	}
	return nil
}

func (p *Param) check() error {
	if err := checkName(p.Name); err != nil {
		return err
	}
	q := quote(p.Name)
	for _, f := range []struct {
		name string
		v    float64
	}{{"start", p.Start}, {"min", p.Min}, {"max", p.Max}, {"c_end", p.CEnd}, {"r_end", p.REnd}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || math.Abs(f.v) > 1e15 {
			return fmt.Errorf("param %s: %s %v is not a finite number", q, f.name, f.v)
		}
	}
	switch {
	case p.Min > p.Max:
		return fmt.Errorf("param %s: min %s > max %s", q, num(p.Min), num(p.Max))
	case p.Start < p.Min || p.Start > p.Max:
		return fmt.Errorf("param %s: start %s is outside [min, max] = [%s, %s]", q, num(p.Start), num(p.Min), num(p.Max))
	case p.CEnd <= 0:
		return fmt.Errorf("param %s: c_end %s must be positive", q, num(p.CEnd))
	case p.REnd <= 0:
		return fmt.Errorf("param %s: r_end %s must be positive", q, num(p.REnd))
	case !p.Float && math.Ceil(p.Min) > math.Floor(p.Max):
		return fmt.Errorf("param %s: [min, max] = [%s, %s] holds no integer", q, num(p.Min), num(p.Max))
	}
	return nil
}

func checkName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("param: name missing")
	case len(name) > MaxNameBytes || !utf8.ValidString(name):
		return fmt.Errorf("param %s: name must be at most %d bytes of UTF-8", quote(name), MaxNameBytes)
	case strings.TrimSpace(name) != name || strings.ContainsAny(name, ",;\n\r\t\"="):
		return fmt.Errorf("param %s: a name has no comma, semicolon, quote, '=', tab, line break, or blanks around it", quote(name))
	}
	if _, _, found := textcheck.FirstControl(name); found {
		return fmt.Errorf("param %s: a name has no control character or invisible format character (it becomes an engine option name)", quote(name))
	}
	return nil
}

// quote quotes at most 100 bytes of s.
func quote(s string) string { return apierr.Q(s) }

// num prints a number as the formats do: the shortest exact decimal.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Tune is a tune's schedule and where it stands: θ and the updates
// applied. It is not safe for concurrent use.
type Tune struct {
	cfg    Config
	bigA   float64   // A = ⌊A_ratio × N⌋
	c, a   []float64 // per parameter
	theta  []float64
	update int // updates applied
	pairs  int // pairs of the batches applied
}

// New validates cfg and returns the tune at its start.
func New(cfg Config) (*Tune, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Params = append([]Param(nil), cfg.Params...)
	n := float64(cfg.Pairs)
	t := &Tune{cfg: cfg, bigA: math.Floor(cfg.ARatio * n)}
	for _, p := range cfg.Params {
		t.c = append(t.c, p.CEnd*math.Pow(n, cfg.Gamma))
		t.a = append(t.a, p.REnd*p.CEnd*p.CEnd*math.Pow(t.bigA+n, cfg.Alpha))
		t.theta = append(t.theta, p.Start)
	}
	return t, nil
}

// Config is the tune's design (its parameters are a copy).
func (t *Tune) Config() Config {
	c := t.cfg
	c.Params = append([]Param(nil), c.Params...)
	return c
}

// Params returns the parameters (a copy).
func (t *Tune) Params() []Param { return append([]Param(nil), t.cfg.Params...) }

// Theta returns θ (a copy).
func (t *Tune) Theta() []float64 { return append([]float64(nil), t.theta...) }

// Updates is the number of updates applied.
func (t *Tune) Updates() int { return t.update }

// PairsApplied is the number of pairs of the batches applied.
func (t *Tune) PairsApplied() int { return t.pairs }

// A is the schedule's stability constant ⌊A_ratio × N⌋.
func (t *Tune) A() float64 { return t.bigA }

// Perturbation is what batch Batch plays: the schedule at iteration K and
// the signs Δ. It depends on the seed and the batch index only.
type Perturbation struct {
	Batch int
	K     int       // the pairs before the batch
	Flip  []int     // Δ_i, ±1
	C     []float64 // c_k per parameter
	R     []float64 // a_k / c_k² per parameter (Fishtest's R)
	// Gain is a_k / c_k per parameter (R·c_k, computed without the
	// square): θ_i moves by Gain_i × (W−L) × Δ_i.
	Gain []float64
	// round holds, per parameter, the uniform draws that round engine A's
	// and engine B's values.
	round [][2]float64
}

// Step is c_k and a_k / c_k² of every parameter at iteration k (what
// status shows for the next batch).
func (t *Tune) Step(k int) (c, r []float64) {
	c = make([]float64, len(t.c))
	r = make([]float64, len(t.c))
	for i := range t.c {
		c[i], r[i], _ = t.step(i, k)
	}
	return c, r
}

// step is c_k, a_k / c_k² and a_k / c_k of parameter i at iteration k.
func (t *Tune) step(i, k int) (ck, rk, gain float64) {
	kk := float64(k) + 1
	ck = t.c[i] / math.Pow(kk, t.cfg.Gamma)
	ak := t.a[i] / math.Pow(t.bigA+kk, t.cfg.Alpha)
	return ck, ak / (ck * ck), ak / ck
}

// Perturbation returns batch b's perturbation (b in [0, Batches)).
func (t *Tune) Perturbation(b int) (Perturbation, error) {
	if b < 0 || b >= t.cfg.Batches() {
		return Perturbation{}, fmt.Errorf("batch %d: the tune has batches 0 to %d", b, t.cfg.Batches()-1)
	}
	n := len(t.cfg.Params)
	p := Perturbation{Batch: b, K: b * t.cfg.BatchPairs, Flip: make([]int, n), C: make([]float64, n), R: make([]float64, n),
		Gain: make([]float64, n), round: make([][2]float64, n)}
	// One stream per batch: PCG's output is fixed by its seeds, so the
	// draws are the same on every run and platform.
	src := rand.NewPCG(t.cfg.Seed, uint64(b)^0x5350534142415443)
	for i := range n {
		p.C[i], p.R[i], p.Gain[i] = t.step(i, p.K)
		p.Flip[i] = 1
		if src.Uint64()&1 == 0 {
			p.Flip[i] = -1
		}
		p.round[i] = [2]float64{unit(src.Uint64()), unit(src.Uint64())}
	}
	return p, nil
}

// unit maps 64 random bits to [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// Sides returns the values engines A and B play in batch p from the
// current θ: clamp(θ ± c_k·Δ), rounded stochastically to integers for
// integer parameters.
func (t *Tune) Sides(p Perturbation) (a, b []float64, err error) {
	n := len(t.cfg.Params)
	if len(p.Flip) != n || len(p.C) != n || len(p.round) != n {
		return nil, nil, fmt.Errorf("batch %d: not a perturbation of this tune", p.Batch)
	}
	a, b = make([]float64, n), make([]float64, n)
	for i, par := range t.cfg.Params {
		d := p.C[i] * float64(p.Flip[i])
		a[i] = par.value(t.theta[i]+d, p.round[i][0])
		b[i] = par.value(t.theta[i]-d, p.round[i][1])
	}
	return a, b, nil
}

// value is v clamped to the parameter's range and, for an integer
// parameter, rounded with the uniform draw u.
func (p *Param) value(v, u float64) float64 {
	v = min(max(v, p.Min), p.Max)
	if p.Float {
		return v
	}
	return min(max(math.Floor(v+u), math.Ceil(p.Min)), math.Floor(p.Max))
}

// Apply applies batch b's result (engine A's wins and losses) to θ.
func (t *Tune) Apply(b, wins, losses int) error {
	p, err := t.Perturbation(b)
	if err != nil {
		return err
	}
	if wins < 0 || losses < 0 {
		return fmt.Errorf("batch %d: wins %d, losses %d: counts are not negative", b, wins, losses)
	}
	_, pairs := t.cfg.BatchRange(b)
	if wins+losses > 2*pairs {
		return fmt.Errorf("batch %d: wins %d + losses %d exceed its %d games", b, wins, losses, 2*pairs)
	}
	result := float64(wins - losses)
	next := make([]float64, len(t.theta))
	for i, par := range t.cfg.Params {
		v := t.theta[i] + p.Gain[i]*result*float64(p.Flip[i])
		if math.IsNaN(v) {
			// Validate's bounds keep the schedule finite; never let a NaN
			// into θ, where clamping cannot remove it.
			return fmt.Errorf("batch %d: param %s: the update is not a number", b, quote(par.Name))
		}
		next[i] = min(max(v, par.Min), par.Max)
	}
	t.theta = next
	t.update++
	t.pairs += pairs
	return nil
}

// Clone returns an independent copy of the tune (to compute an update
// before it is stored).
func (t *Tune) Clone() *Tune {
	c := *t
	c.theta = append([]float64(nil), t.theta...)
	return &c
}

// Restore sets where the tune stands: θ after updates updates over pairs
// pairs (a tune's stored record). θ must be finite and in range.
func (t *Tune) Restore(theta []float64, updates, pairs int) error {
	if len(theta) != len(t.cfg.Params) {
		return fmt.Errorf("theta has %d values for %d parameters", len(theta), len(t.cfg.Params))
	}
	for i, v := range theta {
		p := &t.cfg.Params[i]
		if math.IsNaN(v) || v < p.Min || v > p.Max {
			return fmt.Errorf("param %s: theta %v is outside [min, max] = [%s, %s]", quote(p.Name), v, num(p.Min), num(p.Max))
		}
	}
	if updates < 0 || updates > t.cfg.Batches() || pairs < 0 || pairs > t.cfg.Pairs {
		return fmt.Errorf("%d updates over %d pairs: the tune has %d batches of %d pairs", updates, pairs, t.cfg.Batches(), t.cfg.Pairs)
	}
	copy(t.theta, theta)
	t.update, t.pairs = updates, pairs
	return nil
}

// Update is one applied batch result, as a tune's record keeps it.
type Update struct {
	Batch  int
	Wins   int
	Losses int
}

// Replay returns the tune of cfg after updates, applied in order.
func Replay(cfg Config, updates []Update) (*Tune, error) {
	t, err := New(cfg)
	if err != nil {
		return nil, err
	}
	for i, u := range updates {
		if err := t.Apply(u.Batch, u.Wins, u.Losses); err != nil {
			return nil, fmt.Errorf("update %d: %w", i, err)
		}
	}
	return t, nil
}

// Rounded is θ as the engine takes it: integer parameters rounded to the
// nearest integer inside their range.
func Rounded(ps []Param, theta []float64) []float64 {
	out := make([]float64, len(theta))
	for i, v := range theta {
		out[i] = v
		if i < len(ps) && !ps[i].Float {
			out[i] = min(max(math.Round(v), math.Ceil(ps[i].Min)), math.Floor(ps[i].Max))
		}
	}
	return out
}

// OptionValue is v as a UCI option value: an integer for an integer
// parameter, the shortest exact decimal otherwise.
func (p *Param) OptionValue(v float64) string {
	if !p.Float {
		return strconv.FormatInt(int64(math.Round(v)), 10)
	}
	return num(v)
}
