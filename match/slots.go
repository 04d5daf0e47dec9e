package match

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The game slots, shared by Run (two engines, game pairs) and
// Tournament.Run (N engines, a schedule).
//
// Invariants:
//   - A slot plays one unit at a time, its games one after the other, and
//     owns one player per engine it has needed so far (started when first
//     needed, reused with NewGame); slot 0 starts with the players that
//     startPlayers made before the first game.
//   - next is called under a lock, so units come out in its order.
//   - A unit cut short by the context is dropped, never delivered: its
//     games are played again when the match resumes. A unit stopped by an
//     engine failure without recovery is delivered with the games played.
//   - Every player a slot started is quit before its goroutine ends.

// unit is what one slot plays in a row: games between the same two
// engines from one opening (a game pair, or a single game).
type unit struct {
	index   int // opening sequence number
	pairing int
	opening Opening
	games   []unitGame
}

// unitGame is one game of a unit.
type unitGame struct {
	index        int // in the schedule
	white, black int // engine indices
	round        string
}

// unitResult is a played unit: games[i] is the record of unit.games[i];
// fewer records than games when failed.
type unitResult struct {
	unit   *unit
	games  []*GameRecord
	failed bool // an engine failed and recovery is off: the match stops
}

// lineup is the engines of a match as the slots play them.
type lineup struct {
	configs   []EngineConfig
	names     []string
	limits    []Limits
	newPlayer func(EngineConfig) (Player, error)
	game      *GameConfig
	// recover: a crashed or hung engine is restarted for the next game;
	// false: the unit ends with that game and the match stops.
	recover bool
	// onStart and onEnd, when set, are told of each game as it starts and
	// ends (by its index in the schedule), from the slots' goroutines.
	onStart func(index int, white, black string)
	onEnd   func(index int, g *GameRecord)
}

// startPlayers starts one player of every engine, all at once: a bad
// engine or option is an error before the first game.
func (l *lineup) startPlayers() ([]Player, error) {
	players := make([]Player, len(l.configs))
	errs := make([]error, len(l.configs))
	var wg sync.WaitGroup
	for i, c := range l.configs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			players[i], errs[i] = l.newPlayer(c)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			quitPlayers(players)
			return nil, err
		}
	}
	return players, nil
}

func quitPlayers(ps []Player) {
	var wg sync.WaitGroup
	for _, p := range ps {
		if p != nil {
			wg.Add(1)
			go func() { defer wg.Done(); p.Quit() }()
		}
	}
	wg.Wait()
}

// playUnits plays the units next gives on conc slots and sends each to out,
// which it closes when every slot has ended: next has no more units, or
// ctx ended. first are slot 0's players (startPlayers).
func (l *lineup) playUnits(ctx context.Context, conc int, first []Player, next func() (*unit, bool), out chan<- *unitResult) {
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	take := func() (*unit, bool) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return nil, false
		}
		return next()
	}
	for s := 0; s < conc; s++ {
		players := make([]Player, len(l.configs))
		if s == 0 {
			copy(players, first)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer quitPlayers(players)
			st := &gameState{}
			for {
				u, ok := take()
				if !ok {
					return
				}
				res, ok := l.playUnit(ctx, st, players, u)
				if !ok {
					return // cut short: dropped
				}
				out <- res
				if res.failed {
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
}

// playUnit plays u's games; ok is false when the context cut it short.
func (l *lineup) playUnit(ctx context.Context, st *gameState, players []Player, u *unit) (*unitResult, bool) {
	res := &unitResult{unit: u, games: make([]*GameRecord, 0, len(u.games))}
	for _, ug := range u.games {
		side := [2]int{ug.white, ug.black}
		names := [2]string{l.names[ug.white], l.names[ug.black]}
		lim := [2]Limits{l.limits[ug.white], l.limits[ug.black]}
		var g *GameRecord
		for c, e := range side {
			if players[e] != nil {
				continue
			}
			p, err := l.newPlayer(l.configs[e])
			if err != nil {
				if ctx.Err() != nil {
					return nil, false
				}
				g = notStarted(names, lim, u.opening, c, err)
				break
			}
			players[e] = p
		}
		if g == nil {
			if l.onStart != nil {
				l.onStart(ug.index, names[0], names[1])
			}
			g = st.play(ctx, [2]Player{players[side[0]], players[side[1]]}, names, lim, u.opening, l.game)
		}
		if g.Result == NoResult {
			return nil, false
		}
		g.Round = ug.round
		if g.Finished.IsZero() {
			g.Finished = time.Now()
		}
		for c, e := range side {
			g.EngineIDs[c] = engineIDOf(players[e])
		}
		if l.onEnd != nil {
			l.onEnd(ug.index, g)
		}
		res.games = append(res.games, g)
		if !l.recover && engineFailed(g) {
			res.failed = true
			break
		}
	}
	return res, true
}

// notStarted is the record of a game that colour c's engine could not
// start for: lost by it, as when it cannot start a new game.
func notStarted(names [2]string, lim [2]Limits, op Opening, c int, err error) *GameRecord {
	g := &GameRecord{White: names[0], Black: names[1], Limits: lim, StartFEN: op.FEN, Chess960: op.Chess960,
		OpeningID: op.ID, End: EndCrash, Termination: TermAbandoned}
	g.Incidents = []Incident{{Kind: IncStartup, Player: names[c], Detail: err.Error()}}
	if c == 0 {
		g.Result, g.Reason = BlackWins, "White could not start the game"
	} else {
		g.Result, g.Reason = WhiteWins, "Black could not start the game"
	}
	// The opening's moves are not replayed: the record has none, so its
	// PGN stays legal from the start position or the FEN.
	return g
}

// engineFailed reports whether an engine died, stopped answering or could
// not start in g: what recovery (restarting it) is about. An engine that
// cannot play what the test asks (no setboard, no Chess960) has not failed.
func engineFailed(g *GameRecord) bool {
	if g.End == EndCrash {
		return true
	}
	for _, inc := range g.Incidents {
		if inc.Kind == IncCrash || inc.Kind == IncHang {
			return true
		}
	}
	return false
}

// failure describes the engine failure of a failed unit, for the user.
func (r *unitResult) failure() string {
	g := r.games[len(r.games)-1]
	for _, inc := range g.Incidents {
		switch inc.Kind {
		case IncCrash, IncHang, IncStartup:
			return fmt.Sprintf("game %s: %s", g.Round, inc)
		}
	}
	return "game " + g.Round + ": " + g.Reason
}
