package match

import "time"

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
