package gamepair

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/gamelabel"
)

// The games counter follows deploy/prometheus/METRICS.md (the contract with
// the dashboards and the alert rules): change both together.

// GameSeries lists, by termination, the results a game can have: the
// series of arbiter_games_total, every one exported from start-up. A
// reported game outside them (a draw by checkmate) is a malformed result.
var GameSeries = gamelabel.Series()

// GameLabel is one game's labels of arbiter_games_total.
type GameLabel struct{ Result, Term string }

// GameLabels maps a game's reported outcome to the labels of
// arbiter_games_total; ok is false for an unset or unknown value, or a
// combination no game can have.
func GameLabels(r arbiterv1.GameResult, t arbiterv1.GameTermination) (result, termination string, ok bool) {
	l, err := labelOf(r, t)
	return l.Result, l.Term, err == nil
}

func labelOf(r arbiterv1.GameResult, t arbiterv1.GameTermination) (GameLabel, error) {
	// The wire's enums must be ones this coordinator knows: gamelabel maps
	// unknown values to none/abandoned for display, but a result that
	// counts must say what happened.
	if _, known := arbiterv1.GameResult_name[int32(r)]; !known || r == arbiterv1.GameResult_GAME_RESULT_UNSPECIFIED {
		return GameLabel{}, fmt.Errorf("result %v is not a game result", r)
	}
	if _, known := arbiterv1.GameTermination_name[int32(t)]; !known || t == arbiterv1.GameTermination_GAME_TERMINATION_UNSPECIFIED {
		return GameLabel{}, fmt.Errorf("termination %v is not a game termination", t)
	}
	result, term := gamelabel.Result(r), gamelabel.Termination(t)
	for _, allowed := range GameSeries[term] {
		if allowed == result {
			return GameLabel{result, term}, nil
		}
	}
	return GameLabel{}, fmt.Errorf("result %s cannot come from termination %s", result, term)
}

// GameCounter is arbiter_games_total. One counter serves every workload
// that plays games; whoever makes it registers it.
type GameCounter struct {
	vec *prometheus.CounterVec
}

// NewGameCounter returns the counter with every series at 0.
func NewGameCounter() *GameCounter {
	c := &GameCounter{vec: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arbiter_games_total", Help: "Games reported by workers, by result and termination."},
		[]string{"result", "termination"})}
	for term, results := range GameSeries {
		for _, r := range results {
			c.vec.WithLabelValues(r, term)
		}
	}
	return c
}

// Vec is the counter itself: what to register, and what tests read.
func (c *GameCounter) Vec() *prometheus.CounterVec { return c.vec }

// Observe counts the games of an accepted batch.
func (c *GameCounter) Observe(games []GameLabel) {
	for _, g := range games {
		c.vec.WithLabelValues(g.Result, g.Term).Inc()
	}
}
