package fastchesscli

import (
	"context"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/match"
)

// In the fastchess dialect every UCI engine plays through a
// fastchessPlayer, which reads each search's info lines as fastchess
// 1.8.2 (f618e345) does (its app/src/matchmaking/match/match.cpp and
// engine/uci_engine.cpp):
//
//   - the move's score, depth, seldepth and nodes (its PGN comment, and
//     what adjudication judges) come from one line: the last info line
//     with " score " (multipv 1 or none), preferring one that is not a
//     lowerbound or upperbound;
//   - every such line's PV is played out on the position before the
//     move; an illegal move, or a move after the game would have ended,
//     prints fastchess's warning ("Warning; Illegal PV move - move e2e5
//     from NAME", "Warning; PV continues after checkmate - ...");
//   - with -check-mate-pvs, an exact mate score's PV must be as long as
//     the mate (mate N: 2N-1 plies; mated in N: 2N) and end in checkmate:
//     else "Warning; Incomplete mating PV - from NAME", "Warning; Too long
//     mating PV - from NAME" or "Warning; Mating PV does not end with
//     checkmate - from NAME";
//   - the last exact PV's first move must be the bestmove: else "Warning;
//     Bestmove does not match beginning of last PV - move M from NAME".
//
// Each warning is followed by "Info; LINE", "Position; startpos" (or
// "fen FEN") and "Moves; M1 M2 ..." (the game so far), on lines of
// their own, or joined by " :: " with -testEnv. As in fastchess a
// warning changes nothing in the game; Fishtest's worker stops its run
// on it, and -strict stops the match.

// maxInfoLines caps the info lines kept of one search (what an engine
// prints is no allocation size): past it, only the last line is kept up
// to date, and the PVs of the lines dropped are not checked.
const maxInfoLines = 4096

// pvWarner prints a PV warning's lines.
type pvWarner func(lines string)

// fastchessPlayer is a UCI player seen through fastchess's eyes.
type fastchessPlayer struct {
	match.Player
	name   string
	mates  bool // -check-mate-pvs
	sep    string
	warn   pvWarner
	lines  []string // the current search's info lines with a score
	record func([]byte)
	// claims, when set, carries each move's mate claim to the opponent
	// (signcheck.go); lastClaim is this player's, not yet taken.
	claims    *claimBoard
	lastClaim string
}

func newFastchessPlayer(p match.Player, name string, mates, testEnv bool, warn pvWarner) *fastchessPlayer {
	f := &fastchessPlayer{Player: p, name: name, mates: mates, sep: "\n", warn: warn}
	if testEnv {
		f.sep = " :: "
	}
	f.record = func(line []byte) {
		s := string(line)
		if strings.Contains(s, "info string") || !strings.Contains(s, " score ") {
			return
		}
		if len(f.lines) == maxInfoLines {
			f.lines[maxInfoLines-1] = s // an engine's flood: keep the first lines and the last
			return
		}
		f.lines = append(f.lines, s)
	}
	return f
}

// EngineID, EngineAuthor and Restarts are the wrapped player's (the
// runner names engines and counts restarts through them).
func (f *fastchessPlayer) EngineID() string {
	if p, ok := f.Player.(interface{ EngineID() string }); ok {
		return p.EngineID()
	}
	return ""
}

func (f *fastchessPlayer) EngineAuthor() string {
	if p, ok := f.Player.(interface{ EngineAuthor() string }); ok {
		return p.EngineAuthor()
	}
	return ""
}

func (f *fastchessPlayer) Restarts() int {
	if p, ok := f.Player.(interface{ Restarts() int }); ok {
		return p.Restarts()
	}
	return 0
}

// Think asks the engine for its move, then reads its info lines as
// fastchess does.
func (f *fastchessPlayer) Think(ctx context.Context, req *match.ThinkRequest) (match.Reply, error) {
	f.lines = f.lines[:0]
	req.OnInfoLine = f.record
	rep, err := f.Player.Think(ctx, req)
	req.OnInfoLine = nil
	if err != nil || rep.Move == "" {
		return rep, err
	}
	if last := lastInfoLine(f.lines); last != "" {
		rep.Info = infoOfLine(last, rep.Info)
	}
	f.checkPVs(req, rep.Move)
	f.signCheck(req, rep.Move)
	return rep, nil
}

// checkPVs prints fastchess's warnings about the search's PVs.
func (f *fastchessPlayer) checkPVs(req *match.ThinkRequest, bestmove string) {
	if len(f.lines) == 0 {
		return
	}
	g, err := replay(req.StartFEN, req.Chess960, req.Moves)
	if err != nil {
		return // the game loop judges bad moves
	}
	for _, line := range f.lines {
		if w := g.checkPV(line, f.mates); w != "" {
			f.warnf(w, line, req)
		}
	}
	// The last line of the main PV (multipv 1 or none) starts with the bestmove.
	for i := len(f.lines) - 1; i >= 0; i-- {
		line := f.lines[i]
		if strings.Contains(line, " multipv ") && !strings.Contains(line, " multipv 1 ") {
			continue
		}
		if pv := pvOf(line); !isBound(line) && len(pv) > 0 && pv[0] != bestmove {
			f.warnf("Warning; Bestmove does not match beginning of last PV - move "+bestmove+" from %s", line, req)
		}
		break
	}
}

// warnf prints warning w (%s: the engine's name) with its context lines.
func (f *fastchessPlayer) warnf(w, line string, req *match.ThinkRequest) {
	pos := "startpos"
	if req.StartFEN != "" && req.StartFEN != fastchessStartFEN {
		pos = "fen " + req.StartFEN
	}
	f.warn(strings.Replace(w, "%s", f.name, 1) + f.sep + "Info; " + line + f.sep + "Position; " + pos +
		f.sep + "Moves; " + strings.Join(req.Moves, " "))
}

const fastchessStartFEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

// lastInfoLine is fastchess's UciEngine::lastInfoLine: the last line
// (of lines, each with " score ") of the main PV, exact if there is one.
func lastInfoLine(lines []string) string {
	fallback := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if strings.Contains(l, " multipv ") && !strings.Contains(l, " multipv 1") {
			continue
		}
		if !isBound(l) {
			return l
		}
		if fallback == "" {
			fallback = l
		}
	}
	return fallback
}

func isBound(line string) bool {
	return strings.Contains(line, "lowerbound") || strings.Contains(line, "upperbound")
}

// field is the integer after the first token key of tokens (fastchess's
// findElement with stoll: leading digits), ok false without one.
func field(tokens []string, key string) (int64, bool) {
	for i, t := range tokens {
		if t != key {
			continue
		}
		if i+1 == len(tokens) {
			return 0, false
		}
		v := tokens[i+1]
		end := 0
		for end < len(v) && (v[end] >= '0' && v[end] <= '9' || end == 0 && (v[end] == '-' || v[end] == '+')) {
			end++
		}
		n, err := strconv.ParseInt(v[:end], 10, 64)
		return n, err == nil
	}
	return 0, false
}

// scoreOf is a line's score: "score cp N" or "score mate N" (mate
// true, even for "mate 0").
func scoreOf(tokens []string) (s match.Score, mate, ok bool) {
	for i, t := range tokens {
		if t != "score" || i+1 == len(tokens) {
			continue
		}
		kind := tokens[i+1]
		if kind != "cp" && kind != "mate" {
			return s, false, false
		}
		v, found := field(tokens, kind)
		if !found {
			return s, false, false
		}
		if kind == "mate" {
			return match.Score{Mate: int(v)}, true, true
		}
		return match.Score{CP: int(v)}, false, true
	}
	return s, false, false
}

// infoOfLine is the move's info as fastchess reads it from one line.
func infoOfLine(line string, reported match.Info) match.Info {
	tok := strings.Fields(line)
	var inf match.Info
	inf.Score, _, inf.HasScore = scoreOf(tok)
	d, _ := field(tok, "depth")
	sd, _ := field(tok, "seldepth")
	n, _ := field(tok, "nodes")
	inf.Depth, inf.SelDepth, inf.Nodes, inf.Time = int(d), int(sd), n, reported.Time
	return inf
}

// pvOf is a line's PV: the UCI moves after "pv" up to the first token
// that is not one.
func pvOf(line string) []string {
	tok := strings.Fields(line)
	for i, t := range tok {
		if t != "pv" {
			continue
		}
		end := i + 1
		for end < len(tok) && isUCIMove(tok[end]) {
			end++
		}
		return tok[i+1 : end]
	}
	return nil
}

// isUCIMove is chess.hpp's uci::isUciMove: a square, a square, and an
// optional lower-case promotion piece.
func isUCIMove(s string) bool {
	sq := func(f, r byte) bool { return f >= 'a' && f <= 'h' && r >= '1' && r <= '8' }
	switch {
	case len(s) == 5 && strings.IndexByte("nbrq", s[4]) < 0:
		return false
	case len(s) != 4 && len(s) != 5:
		return false
	}
	return sq(s[0], s[1]) && sq(s[2], s[3])
}
