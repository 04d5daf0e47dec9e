package sprt

import (
	"errors"
	"fmt"
)

// Outcome is one game's result for the new engine.
type Outcome int

// The three outcomes of a game, from the new engine's point of view.
const (
	Loss Outcome = iota
	Draw
	Win
)

// Pentanomial counts game pairs (one opening, colours swapped) by the new
// engine's pair score, in Fishtest's order: [LL, LD+DL, LW+DD+WL, DW+WD, WW],
// that is 0, 0.5, 1, 1.5 and 2 points.
type Pentanomial [5]int64

// Pairs is the number of game pairs.
func (p Pentanomial) Pairs() int64 {
	return p[0] + p[1] + p[2] + p[3] + p[4]
}

// Results are the counts of a test, shaped like Fishtest's results dict so
// that it can be stored and exchanged as is. Wins, Losses and Draws count
// games; Pentanomial, when present, counts pairs and is what every SPRT model
// uses (W/D/L are then only needed for the BayesElo model and for displays).
// A present pentanomial with all of W/D/L zero means W/D/L are unknown, as in
// a Fishtest results dict without those keys.
type Results struct {
	Wins        int64        `json:"wins"`
	Losses      int64        `json:"losses"`
	Draws       int64        `json:"draws"`
	Pentanomial *Pentanomial `json:"pentanomial,omitempty"`
}

// Games is the number of games: W+D+L, or twice the pairs when only the
// pentanomial is known.
func (r Results) Games() int64 {
	if g := r.Wins + r.Draws + r.Losses; g > 0 || r.Pentanomial == nil {
		return g
	}
	return 2 * r.Pentanomial.Pairs()
}

// HasWDL reports whether the game counts are known.
func (r Results) HasWDL() bool {
	return r.Pentanomial == nil || r.Wins+r.Draws+r.Losses > 0
}

// trinomial is Fishtest's R3: [losses, draws, wins].
func (r Results) trinomial() []int64 {
	return []int64{r.Losses, r.Draws, r.Wins}
}

// sprtCounts is what the SPRT feeds on: the pentanomial if present,
// otherwise [L,D,W].
func (r Results) sprtCounts() []int64 {
	if r.Pentanomial != nil {
		return r.Pentanomial[:]
	}
	return r.trinomial()
}

// AddGame counts one unpaired game. Mixing it into results that carry a
// pentanomial would make W/D/L disagree with the pairs, so it is refused.
func (r *Results) AddGame(o Outcome) error {
	if r.Pentanomial != nil {
		return errors.New("results are paired: add games two at a time with AddPair")
	}
	return r.addGame(o)
}

func (r *Results) addGame(o Outcome) error {
	switch o {
	case Win:
		r.Wins++
	case Draw:
		r.Draws++
	case Loss:
		r.Losses++
	default:
		return fmt.Errorf("unknown game outcome %d", o)
	}
	return nil
}

// AddPair counts one game pair: the new engine's outcomes in the two games
// of an opening played with colours swapped.
func (r *Results) AddPair(first, second Outcome) error {
	if first < Loss || first > Win || second < Loss || second > Win {
		return fmt.Errorf("unknown game outcome in pair (%d, %d)", first, second)
	}
	if r.Pentanomial == nil {
		if r.Wins+r.Draws+r.Losses > 0 {
			return errors.New("results already hold unpaired games; a pentanomial cannot start now")
		}
		r.Pentanomial = &Pentanomial{}
	}
	_ = r.addGame(first)
	_ = r.addGame(second)
	r.Pentanomial[int(first)+int(second)]++
	return nil
}

// Add returns the sum of two results, as a coordinator merges work units.
// Both must carry a pentanomial or neither.
func (r Results) Add(o Results) (Results, error) {
	if (r.Pentanomial == nil) != (o.Pentanomial == nil) {
		return Results{}, errors.New("cannot add paired and unpaired results")
	}
	sum := Results{Wins: r.Wins + o.Wins, Losses: r.Losses + o.Losses, Draws: r.Draws + o.Draws}
	if r.Pentanomial != nil {
		p := *r.Pentanomial
		for i, n := range o.Pentanomial {
			p[i] += n
		}
		sum.Pentanomial = &p
	}
	return sum, nil
}

// ResultsFromPentanomial builds results with W/D/L from pair counts, given
// how many pairs in bucket 2 were one win plus one loss (the rest were two
// draws): W = p3 + 2·p4 + wl, L = p1 + 2·p0 + wl, D = p1 + p3 + 2·(p2 − wl).
func ResultsFromPentanomial(p Pentanomial, wlPairs int64) (Results, error) {
	for i, n := range p {
		if n < 0 {
			return Results{}, fmt.Errorf("pentanomial bucket %d is negative (%d)", i, n)
		}
	}
	if wlPairs < 0 || wlPairs > p[2] {
		return Results{}, fmt.Errorf("win+loss pairs %d not within bucket 2 (0..%d)", wlPairs, p[2])
	}
	return Results{
		Wins:        p[3] + 2*p[4] + wlPairs,
		Losses:      p[1] + 2*p[0] + wlPairs,
		Draws:       p[1] + p[3] + 2*(p[2]-wlPairs),
		Pentanomial: &p,
	}, nil
}

// Validate checks that every count is non-negative and, when both W/D/L and
// a pentanomial are given, that they describe the same games.
func (r Results) Validate() error {
	if r.Wins < 0 || r.Losses < 0 || r.Draws < 0 {
		return fmt.Errorf("negative game count (wins %d, draws %d, losses %d)", r.Wins, r.Draws, r.Losses)
	}
	p := r.Pentanomial
	if p == nil {
		return nil
	}
	for i, n := range p {
		if n < 0 {
			return fmt.Errorf("pentanomial bucket %d is negative (%d)", i, n)
		}
	}
	if !r.HasWDL() {
		return nil
	}
	if games, pairs := r.Wins+r.Draws+r.Losses, p.Pairs(); games != 2*pairs {
		return fmt.Errorf("W/D/L count %d games but the pentanomial has %d pairs (%d games)", games, pairs, 2*pairs)
	}
	wlFromWins := r.Wins - p[3] - 2*p[4]
	wlFromLosses := r.Losses - p[1] - 2*p[0]
	if wlFromWins != wlFromLosses || wlFromWins < 0 || wlFromWins > p[2] {
		return fmt.Errorf("W/D/L (%d, %d, %d) cannot come from pentanomial %v", r.Wins, r.Draws, r.Losses, *p)
	}
	return nil
}
