// Package sprt is the sequential probability ratio test of Arbiter, exact to
// Fishtest's statistics (server/fishtest/stats): the generalized LLR of the
// normalized, logistic and legacy BayesElo models on pentanomial or W/D/L
// counts, Fishtest's dynamic overshoot correction, the sequential Elo
// estimate with its confidence interval and LOS, the fixed-games Elo, nElo
// and the BayesElo conversions.
//
// Invariants kept by this package:
//   - Pure computation: no I/O, no package state that changes. A Sequential
//     is the only stateful value, and it holds nothing but Fishtest's sprt
//     dict, so it can be persisted and restored field by field.
//   - Every count is regularized (a zero becomes 1e-3) before any logarithm
//     or root finding, exactly as Fishtest does; results differ from
//     Fishtest's only by floating-point rounding (LLR within 1e-6, Elo figures
//     within 1e-4 on the reference vectors).
//   - Bad input is an error, never a panic and never a silently wrong number.
package sprt

import (
	"fmt"
	"math"
	"strings"
)

// Model is the Elo model in which elo0 and elo1 are expressed.
type Model string

// Fishtest's Elo models. BayesElo is legacy: its bounds are converted to
// logistic Elo with the draw Elo of the current W/D/L counts.
const (
	Normalized Model = "normalized"
	Logistic   Model = "logistic"
	BayesElo   Model = "BayesElo"
)

// ParseModel accepts a model name in any letter case.
func ParseModel(name string) (Model, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "normalized":
		return Normalized, nil
	case "logistic":
		return Logistic, nil
	case "bayeselo":
		return BayesElo, nil
	}
	return "", fmt.Errorf("unknown Elo model %q (want normalized, logistic or bayeselo)", name)
}

// Params are the design of a test: H0 elo=Elo0 against H1 elo=Elo1 in
// Model, with error rates Alpha (false positive) and Beta (false negative).
type Params struct {
	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
	Elo0  float64 `json:"elo0"`
	Elo1  float64 `json:"elo1"`
	Model Model   `json:"elo_model"`
}

// DefaultParams are Fishtest's STC gainer bounds: normalized [0, 2],
// α = β = 0.05.
func DefaultParams() Params {
	return Params{Alpha: 0.05, Beta: 0.05, Elo0: 0, Elo1: 2, Model: Normalized}
}

// Validate rejects a design that Fishtest would compute nonsense for.
func (p Params) Validate() error {
	for _, v := range []struct {
		name string
		x    float64
	}{{"alpha", p.Alpha}, {"beta", p.Beta}} {
		if !(v.x > 0 && v.x < 1) {
			return fmt.Errorf("%s = %g is not in (0, 1)", v.name, v.x)
		}
	}
	if !(p.Alpha+p.Beta < 1) {
		return fmt.Errorf("alpha + beta = %g must be below 1, or the lower bound is not below the upper one", p.Alpha+p.Beta)
	}
	if math.IsNaN(p.Elo0) || math.IsInf(p.Elo0, 0) || math.IsNaN(p.Elo1) || math.IsInf(p.Elo1, 0) {
		return fmt.Errorf("elo0 = %g and elo1 = %g must be finite", p.Elo0, p.Elo1)
	}
	if !(p.Elo0 < p.Elo1) {
		return fmt.Errorf("elo0 = %g must be below elo1 = %g", p.Elo0, p.Elo1)
	}
	switch p.Model {
	case Normalized, Logistic, BayesElo:
	default:
		return fmt.Errorf("unknown Elo model %q", p.Model)
	}
	if p.Model == Normalized {
		for _, b := range []struct {
			name string
			x    float64
		}{{"elo0", p.Elo0}, {"elo1", p.Elo1}} {
			if math.Abs(b.x) > MaxNormalizedElo {
				return fmt.Errorf("%s = %g is beyond ±%g normalized Elo, where the normalized likelihood cannot be computed for every result (its t-value lies outside what a pair's score can reach); give bounds within ±%g, or model=logistic for bounds this far apart", b.name, b.x, MaxNormalizedElo, MaxNormalizedElo)
			}
		}
	}
	return nil
}

// MaxNormalizedElo bounds a normalized design's elo0 and elo1. Fishtest's
// MLE_t_value starts from the uniform pentanomial, whose secular equation
// has no root once |nElo| passes about 231 (|t| > 0.943 on pairs; 340 on
// single games): there every update fails, whatever the games say. 200
// leaves a margin and is far beyond any bound a test of two engines uses.
const MaxNormalizedElo float64 = 200

// Bounds are the stopping bounds on the LLR: ln(β/(1−α)) and ln((1−β)/α).
func (p Params) Bounds() (lower, upper float64) {
	return math.Log(p.Beta / (1 - p.Alpha)), math.Log((1 - p.Beta) / p.Alpha)
}

// State is the decision of a test.
type State string

// The three states; Fishtest stores Continue as "".
const (
	Continue State = "continue"
	Accepted State = "accepted"
	Rejected State = "rejected"
)

// logisticBounds converts the design's bounds to the model the LLR is
// computed in: BayesElo becomes logistic with the draw Elo estimated out of
// sample from the regularized W/D/L counts.
func (p Params) logisticBounds(r Results) (elo0, elo1 float64, model Model, err error) {
	if p.Model != BayesElo {
		return p.Elo0, p.Elo1, p.Model, nil
	}
	drawElo, err := drawEloOf(regularize(r.trinomial()))
	if err != nil {
		return 0, 0, "", err
	}
	return BayesEloToElo(p.Elo0, drawElo), BayesEloToElo(p.Elo1, drawElo), Logistic, nil
}

// LLR is the generalized log-likelihood ratio that Fishtest's update_SPRT
// computes for r under p.
func LLR(p Params, r Results) (float64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	if err := r.Validate(); err != nil {
		return 0, err
	}
	elo0, elo1, model, err := p.logisticBounds(r)
	if err != nil {
		return 0, err
	}
	if model == Logistic {
		return LLRLogistic(elo0, elo1, r.sprtCounts())
	}
	return LLRNormalized(elo0, elo1, r.sprtCounts())
}

// Overshoot is Fishtest's running estimate of how far the LLR overshoots a
// bound between two looks (Siegmund, Sequential Analysis, Corollary 8.33):
// the sums of the new lows (M0, Sq0) and new highs (M1, Sq1) of the LLR
// path, updated once per batch.
type Overshoot struct {
	LastUpdate     int64   `json:"last_update"`
	SkippedUpdates int64   `json:"skipped_updates"`
	Ref0           float64 `json:"ref0"`
	M0             float64 `json:"m0"`
	Sq0            float64 `json:"sq0"`
	Ref1           float64 `json:"ref1"`
	M1             float64 `json:"m1"`
	Sq1            float64 `json:"sq1"`
}

// Sequential is one running SPRT: Fishtest's sprt dict. Feed it the
// cumulative results after every batch of BatchSize pairs (or games, for
// W/D/L results); the overshoot correction assumes that contract and is
// dropped for good (Overshoot = nil) once it is broken: a sample count that
// is not a multiple of BatchSize, or that went down.
type Sequential struct {
	Params    Params     `json:"params"`
	BatchSize int64      `json:"batch_size"`
	LLR       float64    `json:"llr"`
	State     State      `json:"state"`
	Overshoot *Overshoot `json:"overshoot,omitempty"`
	// IllegalUpdate and LostSamples are audit fields, as in Fishtest: the
	// sample count that broke the batch contract, and how many samples
	// disappeared between two updates.
	IllegalUpdate int64 `json:"illegal_update,omitempty"`
	LostSamples   int64 `json:"lost_samples,omitempty"`
}

// Status is what one update tells: the LLR, the bounds, the overshoot
// corrections and the decision (rejected if LLR < lower+O0, accepted if
// LLR > upper−O1).
type Status struct {
	LLR        float64 `json:"llr"`
	LowerBound float64 `json:"lower_bound"`
	UpperBound float64 `json:"upper_bound"`
	O0         float64 `json:"o0"`
	O1         float64 `json:"o1"`
	State      State   `json:"state"`
}

// NewSequential starts a test (Fishtest's SPRT constructor).
func NewSequential(p Params, batchSize int64) (*Sequential, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if batchSize < 1 {
		return nil, fmt.Errorf("batch size %d must be at least 1", batchSize)
	}
	return &Sequential{Params: p, BatchSize: batchSize, State: Continue, Overshoot: &Overshoot{}}, nil
}

// Corrections are the current overshoot corrections o0 ≥ 0 and o1 ≥ 0.
func (s *Sequential) Corrections() (o0, o1 float64) {
	o := s.Overshoot
	if o == nil {
		return 0, 0
	}
	if o.M0 != 0 {
		o0 = -o.Sq0 / o.M0 / 2
	}
	if o.M1 != 0 {
		o1 = o.Sq1 / o.M1 / 2
	}
	return o0, o1
}

// Status reports the test as it stands after the last update.
func (s *Sequential) Status() Status {
	lower, upper := s.Params.Bounds()
	o0, o1 := s.Corrections()
	return Status{LLR: s.LLR, LowerBound: lower, UpperBound: upper, O0: o0, O1: o1, State: s.State}
}

// Update recomputes the test on the cumulative results r (Fishtest's
// update_SPRT). Calling it again with the same counts changes nothing. On
// error the test is left as it was.
func (s *Sequential) Update(r Results) (Status, error) {
	if err := s.Params.Validate(); err != nil {
		return Status{}, err
	}
	if s.BatchSize < 1 {
		return Status{}, fmt.Errorf("batch size %d must be at least 1", s.BatchSize)
	}
	llr, err := LLR(s.Params, r)
	if err != nil {
		return Status{}, err
	}
	var samples int64
	for _, n := range r.sprtCounts() {
		samples += n
	}
	if samples%s.BatchSize != 0 {
		s.IllegalUpdate = samples
		s.Overshoot = nil
	}
	s.LLR = llr
	if o := s.Overshoot; o != nil {
		switch {
		case samples < o.LastUpdate:
			s.LostSamples = o.LastUpdate - samples
			s.Overshoot = nil
		case samples == o.LastUpdate:
			// same data
		case samples == o.LastUpdate+s.BatchSize:
			if llr < o.Ref0 {
				delta := llr - o.Ref0
				o.M0 += delta
				o.Sq0 += delta * delta
				o.Ref0 = llr
			}
			if llr > o.Ref1 {
				delta := llr - o.Ref1
				o.M1 += delta
				o.Sq1 += delta * delta
				o.Ref1 = llr
			}
		default:
			// Some batches were missed: restart the running extremes from
			// here rather than count a multi-batch jump as one step.
			o.Ref0 = llr
			o.Ref1 = llr
			o.SkippedUpdates += samples - o.LastUpdate - 1
		}
		if s.Overshoot != nil {
			o.LastUpdate = samples
		}
	}
	lower, upper := s.Params.Bounds()
	o0, o1 := s.Corrections()
	switch {
	case llr < lower+o0:
		s.State = Rejected
	case llr > upper-o1:
		s.State = Accepted
	default:
		s.State = Continue
	}
	return s.Status(), nil
}
