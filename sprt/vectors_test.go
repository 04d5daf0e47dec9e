package sprt

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The reference vectors were produced by running Fishtest's own statistics
// code; see testdata/README.md beside the shared copy. The copy in testdata
// is preferred so that the test never depends on the shared folder.
var vectorPaths = []string{
	filepath.Join("testdata", "fishtest_vectors.json"),
	filepath.Join("..", "..", "shared", "data", "sprt", "fishtest_vectors.json"),
}

// number decodes a JSON number or the strings "inf", "-inf" and "nan" that
// the vectors use for non-finite values.
type number float64

func (n *number) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		switch s {
		case "inf":
			*n = number(math.Inf(1))
		case "-inf":
			*n = number(math.Inf(-1))
		case "nan":
			*n = number(math.NaN())
		default:
			return &json.UnsupportedValueError{Str: s}
		}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = number(f)
	return nil
}

type vectorSPRT struct {
	Model string  `json:"elo_model"`
	Elo0  float64 `json:"elo0"`
	Elo1  float64 `json:"elo1"`
	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
}

func (v vectorSPRT) params(t *testing.T) Params {
	t.Helper()
	m, err := ParseModel(v.Model)
	if err != nil {
		t.Fatal(err)
	}
	return Params{Alpha: v.Alpha, Beta: v.Beta, Elo0: v.Elo0, Elo1: v.Elo1, Model: m}
}

type vectorNElo struct {
	NElo      number    `json:"nelo"`
	CI95      [2]number `json:"ci95"`
	HalfWidth *number   `json:"halfwidth95"`
}

type vectorCase struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Input       struct {
		Kind        string       `json:"kind"`
		Wins        int64        `json:"wins"`
		Losses      int64        `json:"losses"`
		Draws       int64        `json:"draws"`
		Pentanomial *Pentanomial `json:"pentanomial"`
		WLPairs     int64        `json:"wl_pairs_in_bucket2"`
		SPRT        vectorSPRT   `json:"sprt"`
	} `json:"input"`
	Expected struct {
		SPRT struct {
			LLR   number `json:"llr"`
			Lower number `json:"lower_bound"`
			Upper number `json:"upper_bound"`
			State string `json:"state"`
			O0    number `json:"o0"`
			O1    number `json:"o1"`
		} `json:"sprt"`
		EloEstimate struct {
			Elo  number    `json:"elo_logistic"`
			CI95 [2]number `json:"ci95"`
			LOS  number    `json:"los"`
		} `json:"elo_estimate"`
		FixedGamesElo struct {
			Elo       number    `json:"elo"`
			HalfWidth number    `json:"elo95_halfwidth"`
			CI95      [2]number `json:"ci95"`
			LOS       number    `json:"los"`
		} `json:"fixed_games_elo"`
		Approximations struct {
			BrownianAlt2  *number `json:"llr_gsprt_brownian_alt2"`
			NormalizedAlt *number `json:"llr_normalized_alt"`
		} `json:"llr_approximations"`
		BayesEloBounds *[2]number `json:"bayeselo_bounds_as_logistic"`
		DrawElo        *number    `json:"drawelo"`
		NElo           struct {
			Trinomial   *vectorNElo `json:"trinomial"`
			Pentanomial *vectorNElo `json:"pentanomial"`
		} `json:"nelo"`
		Aux struct {
			Games      number  `json:"games"`
			Pairs      *number `json:"pairs"`
			DrawRatio  number  `json:"draw_ratio"`
			Score      number  `json:"score_per_game"`
			PairsRatio *number `json:"pairs_ratio"`
		} `json:"aux"`
	} `json:"expected"`
}

func (c vectorCase) results() Results {
	return Results{Wins: c.Input.Wins, Losses: c.Input.Losses, Draws: c.Input.Draws, Pentanomial: c.Input.Pentanomial}
}

type vectorStep struct {
	Pentanomial Pentanomial `json:"pentanomial"`
	LLR         number      `json:"llr"`
	O0          number      `json:"o0"`
	O1          number      `json:"o1"`
	State       string      `json:"state"`
}

type vectorSequence struct {
	ID   string `json:"id"`
	SPRT struct {
		vectorSPRT
		BatchPairs int64 `json:"batch_size_pairs"`
	} `json:"sprt"`
	Steps []vectorStep `json:"steps"`
	Final Overshoot    `json:"final_overshoot_dict"`
}

type vectorFile struct {
	Count     int              `json:"count"`
	Cases     []vectorCase     `json:"cases"`
	Sequences []vectorSequence `json:"overshoot_sequences"`
}

func loadVectors(t *testing.T) vectorFile {
	t.Helper()
	var raw []byte
	var err error
	for _, p := range vectorPaths {
		if raw, err = os.ReadFile(p); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("reference vectors not found in %v: %v", vectorPaths, err)
	}
	var v vectorFile
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding vectors: %v", err)
	}
	if len(v.Cases) == 0 || len(v.Cases) != v.Count || len(v.Sequences) == 0 {
		t.Fatalf("vectors file holds %d cases (count says %d) and %d sequences", len(v.Cases), v.Count, len(v.Sequences))
	}
	return v
}

// Tolerances from the vectors' README.
const llrTolerance = 1e-6

func closeAbs(got float64, want number, tol float64) bool {
	w := float64(want)
	if math.IsNaN(w) {
		return math.IsNaN(got)
	}
	if math.IsInf(w, 0) {
		return got == w
	}
	return math.Abs(got-w) <= tol
}

// closeElo is "1e-4 relative or 1e-3 absolute, whichever is looser".
func closeElo(got float64, want number) bool {
	w := float64(want)
	return closeAbs(got, want, math.Max(1e-3, 1e-4*math.Abs(w)))
}

func expectState(want string) State {
	if want == "" {
		return Continue
	}
	return State(want)
}

func TestVectorsSPRT(t *testing.T) {
	for _, c := range loadVectors(t).Cases {
		t.Run(c.ID, func(t *testing.T) {
			p := c.Input.SPRT.params(t)
			seq, err := NewSequential(p, 1)
			if err != nil {
				t.Fatal(err)
			}
			st, err := seq.Update(c.results())
			if err != nil {
				t.Fatalf("%s: %v", c.Description, err)
			}
			e := c.Expected.SPRT
			if !closeAbs(st.LLR, e.LLR, llrTolerance) {
				t.Errorf("llr = %.10g, want %.10g (diff %.3g)", st.LLR, float64(e.LLR), st.LLR-float64(e.LLR))
			}
			if !closeAbs(st.LowerBound, e.Lower, llrTolerance) || !closeAbs(st.UpperBound, e.Upper, llrTolerance) {
				t.Errorf("bounds = (%.10g, %.10g), want (%.10g, %.10g)", st.LowerBound, st.UpperBound, float64(e.Lower), float64(e.Upper))
			}
			if !closeAbs(st.O0, e.O0, llrTolerance) || !closeAbs(st.O1, e.O1, llrTolerance) {
				t.Errorf("o0, o1 = %.10g, %.10g, want %.10g, %.10g", st.O0, st.O1, float64(e.O0), float64(e.O1))
			}
			if want := expectState(e.State); st.State != want {
				t.Errorf("state = %q, want %q", st.State, want)
			}
			// The standalone LLR must agree with the sequential one.
			if llr, err := LLR(p, c.results()); err != nil || llr != st.LLR {
				t.Errorf("LLR() = %v, %v; Update gave %v", llr, err, st.LLR)
			}
		})
	}
}

func TestVectorsEloEstimate(t *testing.T) {
	for _, c := range loadVectors(t).Cases {
		t.Run(c.ID, func(t *testing.T) {
			got, err := SPRTElo(c.Input.SPRT.params(t), c.results(), 0.05)
			if err != nil {
				t.Fatal(err)
			}
			e := c.Expected.EloEstimate
			if !closeElo(got.Elo, e.Elo) {
				t.Errorf("elo = %.10g, want %.10g", got.Elo, float64(e.Elo))
			}
			for i := range 2 {
				if !closeElo(got.CI95[i], e.CI95[i]) {
					t.Errorf("ci95[%d] = %.10g, want %.10g", i, got.CI95[i], float64(e.CI95[i]))
				}
			}
			if !closeElo(got.LOS, e.LOS) {
				t.Errorf("los = %.10g, want %.10g", got.LOS, float64(e.LOS))
			}
		})
	}
}

func TestVectorsFixedGamesElo(t *testing.T) {
	for _, c := range loadVectors(t).Cases {
		t.Run(c.ID, func(t *testing.T) {
			got := FixedGamesElo(c.results())
			e := c.Expected.FixedGamesElo
			if !closeElo(got.Elo, e.Elo) || !closeElo(got.HalfWidth95, e.HalfWidth) || !closeElo(got.LOS, e.LOS) {
				t.Errorf("get_elo = %.10g ± %.10g los %.10g, want %.10g ± %.10g los %.10g",
					got.Elo, got.HalfWidth95, got.LOS, float64(e.Elo), float64(e.HalfWidth), float64(e.LOS))
			}
			for i := range 2 {
				if !closeElo(got.CI95[i], e.CI95[i]) {
					t.Errorf("ci95[%d] = %.10g, want %.10g", i, got.CI95[i], float64(e.CI95[i]))
				}
			}
		})
	}
}

// hugeNEloCI marks the tiny samples whose nElo CIs the README says to
// compare only by sign: their half-widths are thousands of nElo and rest on
// 1e-3 regularization counts.
func hugeNEloCI(c vectorCase) bool {
	return c.results().Games() < 16
}

func checkNElo(t *testing.T, what string, got NElo, want *vectorNElo, loose bool) {
	t.Helper()
	if want == nil {
		t.Fatalf("%s: no expected values", what)
	}
	if !closeElo(got.NElo, want.NElo) {
		t.Errorf("%s nelo = %.10g, want %.10g", what, got.NElo, float64(want.NElo))
	}
	for i := range 2 {
		switch {
		case loose:
			if math.Signbit(got.CI95[i]) != math.Signbit(float64(want.CI95[i])) {
				t.Errorf("%s ci95[%d] = %.10g, want the sign of %.10g", what, i, got.CI95[i], float64(want.CI95[i]))
			}
		case !closeElo(got.CI95[i], want.CI95[i]):
			t.Errorf("%s ci95[%d] = %.10g, want %.10g", what, i, got.CI95[i], float64(want.CI95[i]))
		}
	}
	if want.HalfWidth != nil && !loose && !closeElo(got.HalfWidth95, *want.HalfWidth) {
		t.Errorf("%s halfwidth = %.10g, want %.10g", what, got.HalfWidth95, float64(*want.HalfWidth))
	}
}

func TestVectorsNElo(t *testing.T) {
	for _, c := range loadVectors(t).Cases {
		t.Run(c.ID, func(t *testing.T) {
			loose := hugeNEloCI(c)
			checkNElo(t, "trinomial", NEloFromTrinomial(c.Input.Losses, c.Input.Draws, c.Input.Wins), c.Expected.NElo.Trinomial, loose)
			if c.Input.Pentanomial != nil {
				checkNElo(t, "pentanomial", NEloFromPentanomial(*c.Input.Pentanomial), c.Expected.NElo.Pentanomial, loose)
			} else if c.Expected.NElo.Pentanomial != nil {
				t.Errorf("vector has a pentanomial nElo but no pentanomial input")
			}
		})
	}
}

func TestVectorsApproximationsAndBayesElo(t *testing.T) {
	checked := 0
	for _, c := range loadVectors(t).Cases {
		t.Run(c.ID, func(t *testing.T) {
			p := c.Input.SPRT.params(t)
			r := c.results()
			elo0, elo1, model, err := p.logisticBounds(r)
			if err != nil {
				t.Fatal(err)
			}
			if c.Expected.BayesEloBounds != nil {
				checked++
				if !closeElo(elo0, c.Expected.BayesEloBounds[0]) || !closeElo(elo1, c.Expected.BayesEloBounds[1]) {
					t.Errorf("BayesElo bounds as logistic = [%.10g, %.10g], want %v", elo0, elo1, *c.Expected.BayesEloBounds)
				}
				de, err := DrawElo(c.Input.Losses, c.Input.Draws, c.Input.Wins)
				if err != nil || !closeElo(de, *c.Expected.DrawElo) {
					t.Errorf("drawelo = %.10g (%v), want %.10g", de, err, float64(*c.Expected.DrawElo))
				}
			}
			if want := c.Expected.Approximations.BrownianAlt2; want != nil {
				checked++
				m := newSequentialModel(p.Alpha, p.Beta, elo0, elo1, model, regularize(r.sprtCounts()))
				got := llrBrownianAlt2(m.s0, m.s1, r.sprtCounts())
				if !closeAbs(got, *want, llrTolerance) {
					t.Errorf("brownian alt2 llr = %.10g, want %.10g", got, float64(*want))
				}
			}
			if want := c.Expected.Approximations.NormalizedAlt; want != nil {
				checked++
				got := llrNormalizedAlt(elo0, elo1, r.sprtCounts())
				if !closeAbs(got, *want, llrTolerance) {
					t.Errorf("normalized alt llr = %.10g, want %.10g", got, float64(*want))
				}
			}
		})
	}
	if checked == 0 {
		t.Fatal("no vector carried approximations or BayesElo data")
	}
}

func TestVectorsOvershootSequences(t *testing.T) {
	for _, sq := range loadVectors(t).Sequences {
		t.Run(sq.ID, func(t *testing.T) {
			if len(sq.Steps) == 0 {
				t.Fatal("sequence without steps")
			}
			seq, err := NewSequential(sq.SPRT.params(t), sq.SPRT.BatchPairs)
			if err != nil {
				t.Fatal(err)
			}
			for k, step := range sq.Steps {
				pent := step.Pentanomial
				st, err := seq.Update(Results{Pentanomial: &pent})
				if err != nil {
					t.Fatalf("step %d: %v", k, err)
				}
				if !closeAbs(st.LLR, step.LLR, llrTolerance) || !closeAbs(st.O0, step.O0, llrTolerance) ||
					!closeAbs(st.O1, step.O1, llrTolerance) || st.State != expectState(step.State) {
					t.Fatalf("step %d %v: got llr %.10g o0 %.10g o1 %.10g %s, want %.10g %.10g %.10g %s", k, pent,
						st.LLR, st.O0, st.O1, st.State, float64(step.LLR), float64(step.O0), float64(step.O1), expectState(step.State))
				}
				if last := k == len(sq.Steps)-1; last == (st.State == Continue) {
					t.Fatalf("step %d of %d: state %s; the sequence must stop exactly at its last step", k, len(sq.Steps), st.State)
				}
			}
			got, want := *seq.Overshoot, sq.Final
			if got.LastUpdate != want.LastUpdate || got.SkippedUpdates != want.SkippedUpdates {
				t.Errorf("overshoot counters = %d/%d, want %d/%d", got.LastUpdate, got.SkippedUpdates, want.LastUpdate, want.SkippedUpdates)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"ref0", got.Ref0, want.Ref0}, {"m0", got.M0, want.M0}, {"sq0", got.Sq0, want.Sq0},
				{"ref1", got.Ref1, want.Ref1}, {"m1", got.M1, want.M1}, {"sq1", got.Sq1, want.Sq1}} {
				if math.Abs(f.got-f.want) > llrTolerance {
					t.Errorf("overshoot %s = %.10g, want %.10g", f.name, f.got, f.want)
				}
			}
		})
	}
}
