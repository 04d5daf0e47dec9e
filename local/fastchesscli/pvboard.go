package fastchesscli

import (
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// pvGame is a game's position and the keys of every position before it
// (oldest first), so that a PV played out on it can be judged for the
// game's end as fastchess's board (chess.hpp) judges it.
type pvGame struct {
	pos  engine.Position
	keys []uint64
}

// replay is the game after moves from startFEN ("" the standard start).
func replay(startFEN string, chess960 bool, moves []string) (*pvGame, error) {
	g := &pvGame{pos: engine.StartPosition(), keys: make([]uint64, 0, len(moves)+64)}
	if startFEN != "" {
		var err error
		if g.pos, err = engine.ParseFEN(startFEN); err != nil {
			return nil, err
		}
	}
	g.pos.SetChess960(chess960)
	for _, s := range moves {
		m, err := g.pos.ParseUCIMove(s)
		if err != nil {
			return nil, err
		}
		g.play(m)
	}
	return g, nil
}

func (g *pvGame) play(m engine.Move) {
	g.keys = append(g.keys, g.pos.Key())
	g.pos.MakeMove(m)
}

// How a PV's game ends before its next move (chess.hpp's isGameOver,
// with insufficient material not an end, as fastchess's PV check has it).
const (
	pvGoesOn = iota
	pvRepetition
	pvFifty
	pvMate
	pvStalemate
)

func (g *pvGame) over() int {
	p := &g.pos
	if p.HalfmoveClock() >= 100 {
		if p.IsCheckmate() {
			return pvMate
		}
		return pvFifty
	}
	if dead(p) {
		return pvGoesOn
	}
	n, c := len(g.keys), 0
	for i := n - 2; i >= 0 && i >= n-p.HalfmoveClock()-1; i -= 2 {
		if g.keys[i] == p.Key() {
			if c++; c == 2 {
				return pvRepetition
			}
		}
	}
	switch {
	case p.IsCheckmate():
		return pvMate
	case p.IsStalemate():
		return pvStalemate
	}
	return pvGoesOn
}

// dead is chess.hpp's isInsufficientMaterial: two kings; a king and one
// minor piece against a king; two bishops on squares of one colour (one
// each, or both of one side) and the kings.
func dead(p *engine.Position) bool {
	var count, minors, bishops [2]int
	var colour [2][2]int // bishops by side and square colour
	for s := engine.Square(0); s < 64; s++ {
		pc := p.PieceAt(s)
		if pc == engine.NoPiece {
			continue
		}
		c := pc.Color()
		count[c]++
		switch pc.Type() {
		case engine.Bishop:
			bishops[c]++
			minors[c]++
			colour[c][(s.File()+s.Rank())%2]++
		case engine.Knight:
			minors[c]++
		}
	}
	switch count[0] + count[1] {
	case 2:
		return true
	case 3:
		return minors[0]+minors[1] == 1
	case 4:
		if bishops[0] == 1 && bishops[1] == 1 {
			return colour[0][0] == colour[1][0]
		}
		for c := range 2 {
			if bishops[c] == 2 {
				return colour[c][0] != 1
			}
		}
	}
	return false
}

// checkPV is fastchess's checkPvLine for one info line on the position
// before the move: its warning (with %s for the engine's name), or "".
func (g pvGame) checkPV(line string, mates bool) string {
	pv := pvOf(line)
	if len(pv) == 0 {
		return ""
	}
	for _, s := range pv {
		switch g.over() {
		case pvRepetition:
			return "Warning; PV continues after threefold repetition - move " + s + " from %s"
		case pvFifty:
			return "Warning; PV continues after fifty-move rule - move " + s + " from %s"
		case pvMate:
			return "Warning; PV continues after checkmate - move " + s + " from %s"
		case pvStalemate:
			return "Warning; PV continues after stalemate - move " + s + " from %s"
		}
		m, err := g.pos.ParseUCIMove(s)
		if err != nil {
			return "Warning; Illegal PV move - move " + s + " from %s"
		}
		g.play(m)
	}
	if !mates || isBound(line) {
		return ""
	}
	sc, mate, ok := scoreOf(strings.Fields(line))
	if !ok || !mate {
		return ""
	}
	plies := -2 * sc.Mate
	if sc.Mate > 0 {
		plies = 2*sc.Mate - 1
	}
	switch {
	case len(pv) < plies:
		return "Warning; Incomplete mating PV - from %s"
	case len(pv) > plies:
		return "Warning; Too long mating PV - from %s"
	case !g.pos.IsCheckmate():
		return "Warning; Mating PV does not end with checkmate - from %s"
	}
	return ""
}
