package fastchesscli

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/arbiter-chess/arbiter/match"
)

// fastchess's other check on an engine's move (its match.cpp,
// checkMateScoreSignMismatch): when a move's score and the opponent's
// score for the move before are both mate scores of the same sign (both
// engines claim to mate, or both to be mated), it prints
//
//	Warning; Sign mismatch in mate scores 3 and 1 from A (White) and B (Black)
//
// then "Infos; THEIR_LINE ; OUR_LINE", "Position; ..." and "Moves; ..."
// (the game with the move), on lines of their own or joined by " :: "
// with -testEnv. Fishtest's worker stops its run on it.

// mateClaim is what a move's engine said, kept for the next mover's
// check: by the game up to and with the move (claimKey).
type mateClaim struct {
	name, line string
	mate       int64
	isMate     bool
}

// claimKey names a game by its start and moves.
func claimKey(startFEN string, moves []string, move string) string {
	return startFEN + "|" + strings.Join(moves, " ") + "|" + move
}

// claimBoard is the claims of the moves just played, shared by a
// match's players: each player takes the opponent's claim before its
// move and leaves its own, so it holds at most one claim per player.
type claimBoard struct{ m sync.Map }

// signCheck takes the opponent's claim for the move before req's
// position, prints fastchess's warning when the two mate scores share a
// sign, and leaves this move's claim for the opponent.
func (f *fastchessPlayer) signCheck(req *match.ThinkRequest, bestmove string) {
	if f.claims == nil {
		return
	}
	if f.lastClaim != "" {
		f.claims.m.Delete(f.lastClaim) // not taken: the game ended
	}
	n := len(req.Moves)
	var them mateClaim
	if n > 0 {
		if v, ok := f.claims.m.LoadAndDelete(claimKey(req.StartFEN, req.Moves[:n-1], req.Moves[n-1])); ok {
			them = v.(mateClaim)
		}
	}
	us := mateClaim{name: f.name, line: lastInfoLine(f.lines)}
	if us.line != "" {
		if sc, mate, ok := scoreOf(strings.Fields(us.line)); ok && mate {
			us.mate, us.isMate = int64(sc.Mate), true
		}
	}
	f.lastClaim = claimKey(req.StartFEN, req.Moves, bestmove)
	f.claims.m.Store(f.lastClaim, us)
	if !them.isMate || !us.isMate || them.mate*us.mate <= 0 {
		return
	}
	themColor, usColor := "White", "Black"
	if req.White {
		themColor, usColor = "Black", "White"
	}
	pos := "startpos"
	if req.StartFEN != "" && req.StartFEN != fastchessStartFEN {
		pos = "fen " + req.StartFEN
	}
	moves := strings.Join(append(append([]string(nil), req.Moves...), bestmove), " ")
	f.warn(fmt.Sprintf("Warning; Sign mismatch in mate scores %d and %d from %s (%s) and %s (%s)", them.mate, us.mate,
		them.name, themColor, us.name, usColor) + f.sep + "Infos; " + them.line + " ; " + us.line +
		f.sep + "Position; " + pos + f.sep + "Moves; " + moves)
}

// NewGame forgets this player's claim of the last game.
func (f *fastchessPlayer) NewGame(ctx context.Context, chess960 bool) error {
	if f.claims != nil && f.lastClaim != "" {
		f.claims.m.Delete(f.lastClaim)
		f.lastClaim = ""
	}
	return f.Player.NewGame(ctx, chess960)
}
