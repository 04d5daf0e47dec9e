package match

import (
	"fmt"
	"time"
)

// Tally counts what happened in a match's finished games.
type Tally struct {
	Games      int
	Incidents  []Incident
	TimeLosses int
	Crashes    int
	Hangs      int
	Illegal    int
	Overruns   int
	MaxOverrun time.Duration
	// Restarts counts engines restarted after they died (each also an
	// incident of its game).
	Restarts int
	// Abandoned counts games that were not played to an end: an engine
	// could not start them, crashed, or could not play what was asked.
	Abandoned int
	// Terminations counts finished games by Reason ("White mates", ...).
	Terminations map[string]int
	Elapsed      time.Duration
}

// add counts one finished game.
func (t *Tally) add(g *GameRecord) {
	t.Games++
	if t.Terminations == nil {
		t.Terminations = map[string]int{}
	}
	t.Terminations[g.Reason]++
	if g.Termination == TermAbandoned {
		t.Abandoned++
	}
	for _, inc := range g.Incidents {
		t.Incidents = append(t.Incidents, inc)
		switch inc.Kind {
		case IncTimeLoss:
			t.TimeLosses++
		case IncCrash:
			t.Crashes++
		case IncHang:
			t.Hangs++
		case IncIllegal:
			t.Illegal++
		case IncOverrun:
			t.Overruns++
			t.MaxOverrun = max(t.MaxOverrun, inc.Over)
		case IncRestart:
			t.Restarts++
		}
	}
}

// abandonFloor and abandonShare bound the games a match may see abandoned
// (an engine that could not start a game, crashed, or cannot play what is
// asked): beyond both, the match stops failed, since its figures would be
// made of forfeits rather than games.
const (
	abandonFloor = 2
	abandonShare = 0.1
)

// tooManyAbandoned reports whether more than abandonFloor games, and more
// than abandonShare of them, ended abandoned.
func (t *Tally) tooManyAbandoned() bool {
	return t.Abandoned > abandonFloor && float64(t.Abandoned) > abandonShare*float64(t.Games)
}

// abandonedFailure is the failure of a match stopped for too many
// abandoned games: how many, and the engine and reason of the last one
// (in ur, the unit that crossed the bound).
func (t *Tally) abandonedFailure(ur *unitResult) string {
	why := ""
	for _, g := range ur.games {
		if g.Termination != TermAbandoned {
			continue
		}
		why = fmt.Sprintf("game %s: %s", g.Round, g.Reason)
		for _, inc := range g.Incidents {
			if inc.Kind == IncCrash || inc.Kind == IncHang || inc.Kind == IncStartup {
				why = fmt.Sprintf("game %s: engine %q: %s", g.Round, inc.Player, inc.Detail)
				break
			}
		}
	}
	return fmt.Sprintf("%d of %d games abandoned (more than %d and %.0f %%); the last, %s", t.Abandoned, t.Games, abandonFloor, 100*abandonShare, why)
}
