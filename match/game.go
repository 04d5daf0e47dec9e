package match

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// Game end by the rules, in the order they are checked before every move:
// checkmate and stalemate (they take precedence over every draw rule: a
// mate on the 100th half-move stands), insufficient material, the
// fifty-move rule, threefold repetition. Engine failures end the game
// against the failing engine; a flag fall (or a hang under a clock) is a
// draw when the opponent has no mating material (FIDE 6.9).
//
// Invariants of playGame:
//   - pos is the current position; moves/uci hold every ply from the game's
//     start position (opening plies first, BookPlies of them).
//   - hist holds the positions since the last irreversible move (halfmove
//     clock 0), current one last; repetitions are searched only there.
//   - clock[c] is c's remaining time before c's next move.

// Result of a game.
type Result uint8

const (
	NoResult Result = iota // the game was not finished (match stopped)
	WhiteWins
	BlackWins
	Draw
)

// String is the PGN result token.
func (r Result) String() string {
	switch r {
	case WhiteWins:
		return "1-0"
	case BlackWins:
		return "0-1"
	case Draw:
		return "1/2-1/2"
	}
	return "*"
}

// End is how a game ended, for programs (metrics, the wire). Reason (for
// people) and Termination (the PGN tag) say the same in words; nothing
// needs to read those to know how a game ended.
type End uint8

const (
	EndNone                 End = iota // the game has not ended
	EndCheckmate                       // a side is mated
	EndStalemate                       // stalemate
	EndRepetition                      // threefold repetition
	EndFiftyMoves                      // the fifty-move rule
	EndInsufficientMaterial            // neither side can mate
	EndResign                          // an engine resigned on its own
	EndAdjudication                    // resign, draw or length adjudication by the runner
	EndTimeForfeit                     // flag fall, a move time exceeded, or a hang under a clock
	EndIllegalMove                     // an illegal or unparsable move, or no move
	EndCrash                           // an engine exited, or could not start the game
	EndStall                           // an engine stopped answering (no clock to lose on)
	EndAbandoned                       // anything else: a bad opening, a protocol error, the match stopped
)

var endNames = [...]string{"none", "checkmate", "stalemate", "repetition", "fifty moves", "insufficient material",
	"resign", "adjudication", "time forfeit", "illegal move", "crash", "stall", "abandoned"}

func (e End) String() string {
	if int(e) < len(endNames) {
		return endNames[e]
	}
	return "End(" + strconv.Itoa(int(e)) + ")"
}

// Termination values used in the PGN Termination tag.
const (
	TermNormal         = "normal"
	TermTimeForfeit    = "time forfeit"
	TermAdjudication   = "adjudication"
	TermRulesInfract   = "rules infraction"
	TermAbandoned      = "abandoned"
	TermUnterminated   = "unterminated"
	TermStalledConnect = "stalled connection"
)

// IncidentKind classifies what went wrong with an engine.
type IncidentKind string

const (
	IncTimeLoss   IncidentKind = "time_loss"   // clock ran out beyond the margin
	IncOverrun    IncidentKind = "overrun"     // clock or move time exceeded within the margin
	IncCrash      IncidentKind = "crash"       // process exited
	IncHang       IncidentKind = "hang"        // no reply within the time plus margin; killed
	IncIllegal    IncidentKind = "illegal"     // an illegal or unparsable move
	IncNoBestmove IncidentKind = "no_bestmove" // replied without a move
	IncStartup    IncidentKind = "startup"     // could not start a new game
	IncProtocol   IncidentKind = "protocol"    // anything else
	IncRestart    IncidentKind = "restart"     // the engine was restarted for this game after it died (not a loss)
)

// Incident is one engine failure or overrun.
type Incident struct {
	Kind   IncidentKind
	Player string        // the engine's name
	Ply    int           // the ply being thought on (0-based from the game's start position)
	Over   time.Duration // for time_loss and overrun: by how much
	Detail string
}

func (i Incident) String() string {
	s := fmt.Sprintf("%s: %s at ply %d", i.Player, i.Kind, i.Ply)
	if i.Over > 0 {
		s += fmt.Sprintf(" (over by %v)", i.Over.Round(time.Microsecond))
	}
	if i.Detail != "" {
		s += ": " + i.Detail
	}
	return s
}

// MoveInfo is what the engine said about one of its moves.
type MoveInfo struct {
	HasScore bool
	Score    Score
	Depth    int
	SelDepth int
	Nodes    int64
	Elapsed  time.Duration
	// TimeLeft is the mover's clock after the move (increment added);
	// zero without a clock.
	TimeLeft time.Duration
}

// Adjudication ends games early. Zero fields disable a rule.
type Adjudication struct {
	// Resign: a side whose engine scores ≤ -ResignScore while the opponent
	// scores ≥ +ResignScore for ResignMoves consecutive moves of each engine loses.
	ResignMoves int
	ResignScore int
	// Draw: from move DrawMoveNumber (counted from the first engine move),
	// both engines score |s| ≤ DrawScore for DrawMoves consecutive moves each.
	DrawMoveNumber int
	DrawMoves      int
	DrawScore      int
	// MaxMoves: a draw after this many moves of the engines (opening excluded).
	MaxMoves int
	// Tablebase is the test's tablebase rule as it travels to workers;
	// GameConfig.Tablebase (rule and tables) is what plays it.
	Tablebase TBRule
}

// GameConfig holds what does not change between the games of a match.
type GameConfig struct {
	Adjudication Adjudication
	// TimeMargin is how far an engine may exceed its clock or move time
	// without losing; every overrun is recorded anyway. Default 0.
	TimeMargin time.Duration
	// HangTimeout bounds a move under nodes or depth limits only (no clock,
	// no move time). Default 30s.
	HangTimeout time.Duration
	// Tablebase, when set, ends games by the Syzygy tables (tbadjudicate.go).
	Tablebase *TablebaseAdjudication
}

func (c *GameConfig) hangTimeout() time.Duration {
	if c.HangTimeout > 0 {
		return c.HangTimeout
	}
	return 30 * time.Second
}

// Opening is the start of a game: a position and moves from it.
type Opening struct {
	ID       int      // index in the book
	FEN      string   // "" = the standard start position
	Moves    []string // UCI moves from FEN
	Chess960 bool
}

// GameRecord is a finished game.
type GameRecord struct {
	White, Black string
	Limits       [2]Limits // white's, black's
	Result       Result
	End          End    // how the game ended
	Termination  string // PGN Termination tag value
	Reason       string // human-readable: "White mates", "Black loses on time"
	StartFEN     string // "" = standard start
	Chess960     bool
	BookPlies    int
	Moves        []engine.Move
	Info         []MoveInfo // per move; zero for book moves
	Incidents    []Incident
	Start        time.Time
	Round        string // PGN Round tag ("3.1"); set by the runner
	OpeningID    int
	// Finished is when the game ended and EngineIDs what White's and
	// Black's engines call themselves; both set by the runner, for the
	// fastchess form of the PGN.
	Finished  time.Time
	EngineIDs [2]EngineID
}

// gameState is reusable scratch space for one concurrent game slot, so that
// a match does not allocate per move beyond the game's own record.
type gameState struct {
	hist []engine.Position
	uci  []string
	req  ThinkRequest
}

// PlayGame plays one game between white and black from op.
func PlayGame(ctx context.Context, white, black Player, wl, bl Limits, op Opening, cfg GameConfig) *GameRecord {
	var st gameState
	return st.play(ctx, [2]Player{white, black}, [2]string{white.Name(), black.Name()}, [2]Limits{wl, bl}, op, &cfg)
}

// restarter is a player that restarts its engine at NewGame after the
// engine died; the game loop records every restart as an incident.
type restarter interface{ Restarts() int }

func restartsOf(p Player) int {
	if r, ok := p.(restarter); ok {
		return r.Restarts()
	}
	return 0
}

// ending is how a game ends: its result, the kind of end, the PGN
// Termination and the reason in words.
type ending struct {
	r      Result
	e      End
	term   string
	reason string
}

// stopped is the end of a game whose match was stopped.
var stopped = &ending{NoResult, EndAbandoned, TermUnterminated, "match stopped"}

// lossOf is the result of a game colour c loses.
func lossOf(c engine.Color) Result {
	if c == engine.White {
		return BlackWins
	}
	return WhiteWins
}

// play plays one game; name[c] names the player of colour c in the record
// (the runner's names, which may differ from what a player calls itself).
func (st *gameState) play(ctx context.Context, pl [2]Player, name [2]string, lim [2]Limits, op Opening, cfg *GameConfig) *GameRecord {
	g := &GameRecord{
		White: name[0], Black: name[1], Limits: lim,
		StartFEN: op.FEN, Chess960: op.Chess960, Start: time.Now(), OpeningID: op.ID,
		Moves: make([]engine.Move, 0, 160), Info: make([]MoveInfo, 0, 160),
	}
	if x := st.moves(ctx, g, pl, name, lim, op, cfg); x != nil {
		g.Result, g.End, g.Termination, g.Reason = x.r, x.e, x.term, x.reason
	}
	return g
}

// moves plays the game g from its opening to its end, which it returns.
func (st *gameState) moves(ctx context.Context, g *GameRecord, pl [2]Player, name [2]string, lim [2]Limits, op Opening, cfg *GameConfig) *ending {
	pos, x := st.begin(ctx, g, pl, name, op)
	if x != nil {
		return x
	}
	clk := gameClocks{}
	for c := 0; c < 2; c++ {
		clk.left[c] = lim[c].Base
	}
	adj := NewAdjudicator(cfg.Adjudication)
	req := &st.req
	*req = ThinkRequest{StartFEN: op.FEN, Chess960: op.Chess960}
	for {
		if r, e, term, reason, over := st.status(&pos); over {
			return &ending{r, e, term, reason}
		}
		if ctx.Err() != nil {
			return stopped
		}
		side := pos.SideToMove()
		c := int(side)
		l := lim[c]
		req.Moves = st.uci
		req.Limits = l
		req.White = side == engine.White
		req.Time = clk.left
		req.Inc = [2]time.Duration{lim[0].Inc, lim[1].Inc}
		req.MovesToGo = 0
		if l.MovesToGo > 0 {
			req.MovesToGo = l.MovesToGo - clk.periodMoves[c]
		}
		budget := thinkBudget(l, clk.left[c], cfg)
		req.Timeout = budget + cfg.TimeMargin
		if l.HasClock() || l.MoveTime > 0 {
			// A little slack for the runner's own scheduling; overruns are
			// still judged on the measured time below.
			req.Timeout += 5 * time.Millisecond
		}

		ply := len(g.Moves)
		rep, err := pl[c].Think(ctx, req)
		if err != nil {
			return thinkFailed(ctx, g, err, rep, &pos, name[c], ply, l, budget)
		}
		m, perr := pos.ParseUCIMove(rep.Move)
		if perr != nil {
			if m2, err2 := pos.ParseSAN(rep.Move); err2 == nil {
				m, perr = m2, nil
			}
		}
		if perr != nil {
			g.Incidents = append(g.Incidents, Incident{Kind: IncIllegal, Player: name[c], Ply: ply, Detail: fmt.Sprintf("move %q in %s", rep.Move, pos.FEN())})
			return &ending{lossOf(side), EndIllegalMove, TermRulesInfract, fmt.Sprintf("%s makes an illegal move: %s", colorName(side), rep.Move)}
		}
		if x := clk.charge(g, &pos, name[c], ply, l, rep.Elapsed, cfg.TimeMargin); x != nil {
			return x
		}

		inf := MoveInfo{HasScore: rep.Info.HasScore, Score: rep.Info.Score, Depth: rep.Info.Depth, SelDepth: rep.Info.SelDepth, Nodes: rep.Info.Nodes, Elapsed: rep.Elapsed}
		if l.HasClock() {
			inf.TimeLeft = clk.left[c]
		}
		st.push(&pos, m, g, inf)

		if r, reason, over := st.adjudicate(&pos, &adj, side, inf, cfg); over {
			return &ending{r, EndAdjudication, TermAdjudication, reason}
		}
	}
}

// begin sets up the game's position from the opening (its FEN and book
// moves) and starts a new game on both players; an end is a bad opening,
// a player that could not start, or the match stopped.
func (st *gameState) begin(ctx context.Context, g *GameRecord, pl [2]Player, name [2]string, op Opening) (engine.Position, *ending) {
	var pos engine.Position
	if op.FEN == "" {
		pos = engine.StartPosition()
	} else {
		var err error
		if pos, err = engine.ParseFEN(op.FEN); err != nil {
			return pos, &ending{NoResult, EndAbandoned, TermAbandoned, fmt.Sprintf("bad opening FEN %q: %v", op.FEN, err)}
		}
	}
	if op.Chess960 {
		pos.SetChess960(true)
	}
	st.uci = st.uci[:0]
	st.hist = append(st.hist[:0], pos)
	for _, s := range op.Moves {
		m, err := pos.ParseUCIMove(s)
		if err != nil {
			return pos, &ending{NoResult, EndAbandoned, TermAbandoned, fmt.Sprintf("opening %d: bad move %q: %v", op.ID, s, err)}
		}
		st.push(&pos, m, g, MoveInfo{})
	}
	g.BookPlies = len(g.Moves)

	// Side index of the player to move: pl[0] plays white.
	for i := 0; i < 2; i++ {
		restarts := restartsOf(pl[i])
		err := pl[i].NewGame(ctx, op.Chess960)
		if n := restartsOf(pl[i]) - restarts; n > 0 {
			g.Incidents = append(g.Incidents, Incident{Kind: IncRestart, Player: name[i], Ply: len(g.Moves), Detail: fmt.Sprintf("engine restarted (%d) after it died", n)})
		}
		if err != nil {
			if ctx.Err() != nil {
				return pos, stopped
			}
			g.Incidents = append(g.Incidents, Incident{Kind: IncStartup, Player: name[i], Ply: len(g.Moves), Detail: err.Error()})
			return pos, &ending{lossOf(engine.Color(i)), EndCrash, TermAbandoned, fmt.Sprintf("%s could not start the game", colorName(engine.Color(i)))}
		}
	}
	return pos, nil
}

// thinkBudget is how long the engine to move may think under l with left
// on its clock: its clock (or its move time, the lesser), its move time,
// or, under a node or depth limit, the hang timeout. The margin is added
// by the caller.
func thinkBudget(l Limits, left time.Duration, cfg *GameConfig) time.Duration {
	switch {
	case l.HasClock():
		if l.MoveTime > 0 {
			return min(left, l.MoveTime)
		}
		return left
	case l.MoveTime > 0:
		return l.MoveTime
	default:
		return cfg.hangTimeout()
	}
}

// thinkFailed is the end of a game whose player (mover, to move in pos at
// ply) failed to answer with a move, with the incident it records.
func thinkFailed(ctx context.Context, g *GameRecord, err error, rep Reply, pos *engine.Position, mover string, ply int, l Limits, budget time.Duration) *ending {
	side := pos.SideToMove()
	incident := func(kind IncidentKind, detail string) {
		g.Incidents = append(g.Incidents, Incident{Kind: kind, Player: mover, Ply: ply, Detail: detail})
	}
	switch {
	case errors.Is(err, ErrStopped) || ctx.Err() != nil:
		return stopped
	case errors.Is(err, ErrHang):
		g.Incidents = append(g.Incidents, Incident{Kind: IncHang, Player: mover, Ply: ply, Over: rep.Elapsed - budget, Detail: fmt.Sprintf("no move after %v", rep.Elapsed.Round(time.Millisecond))})
		if l.HasClock() {
			if !canMate(pos, side.Other()) {
				return &ending{Draw, EndTimeForfeit, TermTimeForfeit, fmt.Sprintf("%s loses on time (hang), %s cannot mate", colorName(side), colorName(side.Other()))}
			}
			return &ending{lossOf(side), EndTimeForfeit, TermTimeForfeit, fmt.Sprintf("%s loses on time (engine hangs)", colorName(side))}
		}
		return &ending{lossOf(side), EndStall, TermStalledConnect, fmt.Sprintf("%s's engine hangs", colorName(side))}
	case errors.Is(err, ErrCrash):
		incident(IncCrash, err.Error())
		return &ending{lossOf(side), EndCrash, TermAbandoned, fmt.Sprintf("%s's engine crashed", colorName(side))}
	case errors.Is(err, ErrNoBestmove):
		incident(IncNoBestmove, "")
		return &ending{lossOf(side), EndIllegalMove, TermRulesInfract, fmt.Sprintf("%s's engine sent no move", colorName(side))}
	case errors.Is(err, ErrResign):
		return &ending{lossOf(side), EndResign, TermNormal, fmt.Sprintf("%s resigns", colorName(side))}
	case errors.Is(err, ErrUnsupport):
		incident(IncStartup, err.Error())
		return &ending{lossOf(side), EndAbandoned, TermAbandoned, err.Error()}
	default:
		incident(IncProtocol, err.Error())
		return &ending{lossOf(side), EndAbandoned, TermAbandoned, fmt.Sprintf("%s's engine failed: %v", colorName(side), err)}
	}
}

// gameClocks are both sides' clocks: the time left, and the moves made
// in the current time-control period.
type gameClocks struct {
	left        [2]time.Duration
	periodMoves [2]int
}

// charge judges a move that took elapsed against l, on the time the
// player measured: a clock or a move time overrun by more than margin
// loses (a draw when the other side cannot mate), a smaller overrun is an
// incident; then the clock gets its increment and, at the period's end,
// its next period.
func (k *gameClocks) charge(g *GameRecord, pos *engine.Position, mover string, ply int, l Limits, elapsed, margin time.Duration) *ending {
	side := pos.SideToMove()
	c := int(side)
	if !l.HasClock() {
		if l.MoveTime > 0 && elapsed > l.MoveTime {
			over := elapsed - l.MoveTime
			if over > margin {
				g.Incidents = append(g.Incidents, Incident{Kind: IncTimeLoss, Player: mover, Ply: ply, Over: over})
				return &ending{lossOf(side), EndTimeForfeit, TermTimeForfeit, fmt.Sprintf("%s exceeds the move time", colorName(side))}
			}
			g.Incidents = append(g.Incidents, Incident{Kind: IncOverrun, Player: mover, Ply: ply, Over: over})
		}
		return nil
	}
	k.left[c] -= elapsed
	if k.left[c] < 0 {
		over := -k.left[c]
		if over > margin {
			g.Incidents = append(g.Incidents, Incident{Kind: IncTimeLoss, Player: mover, Ply: ply, Over: over})
			if !canMate(pos, side.Other()) {
				return &ending{Draw, EndTimeForfeit, TermTimeForfeit, fmt.Sprintf("%s loses on time, %s cannot mate", colorName(side), colorName(side.Other()))}
			}
			return &ending{lossOf(side), EndTimeForfeit, TermTimeForfeit, fmt.Sprintf("%s loses on time", colorName(side))}
		}
		g.Incidents = append(g.Incidents, Incident{Kind: IncOverrun, Player: mover, Ply: ply, Over: over})
		k.left[c] = 0
	}
	k.left[c] += l.Inc
	if l.MovesToGo > 0 {
		k.periodMoves[c]++
		if k.periodMoves[c] == l.MovesToGo {
			k.periodMoves[c] = 0
			k.left[c] += l.Base
		}
	}
	return nil
}

// adjudicate reports whether the game ends by adjudication after the move
// side just made (info inf) to pos: by the tables first (exact), then by
// the scores' streaks. A move-limit end in a position the rules also end
// is left to the rules (the loop's next status check).
func (st *gameState) adjudicate(pos *engine.Position, adj *Adjudicator, side engine.Color, inf MoveInfo, cfg *GameConfig) (Result, string, bool) {
	if tb := cfg.Tablebase; tb != nil && tb.Eligible(pos) {
		if _, _, _, _, over := st.status(pos); !over {
			if r, reason, ok := tb.TablebaseVerdict(pos); ok {
				adj.Ply(side, inf.Score.Centipawns(), inf.HasScore) // keep the ply count true
				return r, reason, true
			}
		}
	}
	switch rule, r := adj.Ply(side, inf.Score.Centipawns(), inf.HasScore); rule {
	case AdjudicationResign:
		return r, fmt.Sprintf("%s resigns (adjudication)", colorName(loserOf(r))), true
	case AdjudicationDraw:
		return Draw, "draw by adjudication", true
	case AdjudicationMaxMoves:
		if _, _, _, _, over := st.status(pos); over {
			return NoResult, "", false
		}
		return Draw, fmt.Sprintf("draw by adjudication: %d moves", cfg.Adjudication.MaxMoves), true
	}
	return NoResult, "", false
}

// push makes move m and records it.
func (st *gameState) push(pos *engine.Position, m engine.Move, g *GameRecord, inf MoveInfo) {
	st.uci = append(st.uci, pos.UCIMove(m))
	pos.MakeMove(m)
	g.Moves = append(g.Moves, m)
	g.Info = append(g.Info, inf)
	if pos.HalfmoveClock() == 0 {
		st.hist = st.hist[:0]
	}
	st.hist = append(st.hist, *pos)
}

// status reports whether the game is over in pos (the last entry of hist).
func (st *gameState) status(pos *engine.Position) (Result, End, string, string, bool) {
	return RulesStatus(pos, st.hist)
}

// RulesStatus reports whether the game is over by the rules in pos, checked in
// the game loop's order: checkmate and stalemate, insufficient material,
// the fifty-move rule, threefold repetition. hist holds the positions since
// the last irreversible move (halfmove clock 0), pos last. It returns the
// result, the end, the PGN Termination tag and the reason in words, and
// whether the game is over.
func RulesStatus(pos *engine.Position, hist []engine.Position) (Result, End, string, string, bool) {
	if !pos.HasLegalMove() {
		if !pos.InCheck() {
			return Draw, EndStalemate, TermNormal, "draw by stalemate", true
		}
		if pos.SideToMove() == engine.White {
			return BlackWins, EndCheckmate, TermNormal, "Black mates", true
		}
		return WhiteWins, EndCheckmate, TermNormal, "White mates", true
	}
	if pos.InsufficientMaterial() {
		return Draw, EndInsufficientMaterial, TermNormal, "draw by insufficient mating material", true
	}
	if pos.HalfmoveClock() >= 100 {
		return Draw, EndFiftyMoves, TermNormal, "draw by fifty-move rule", true
	}
	if repetitions(pos, hist) >= 3 {
		return Draw, EndRepetition, TermNormal, "draw by threefold repetition", true
	}
	return NoResult, EndNone, "", "", false
}

// repetitions counts the occurrences of pos (itself included) in hist, the
// positions since the last irreversible move. Keys select candidates;
// samePosition confirms them, so that a key collision never ends a game.
func repetitions(pos *engine.Position, hist []engine.Position) int {
	n := 1
	key := pos.Key()
	for i := len(hist) - 3; i >= 0; i -= 2 {
		if hist[i].Key() == key && samePosition(&hist[i], pos) {
			n++
		}
	}
	return n
}

// samePosition compares what FIDE 9.2 compares: the placement, the side to
// move, castling rights and the en-passant right (the engine keeps an
// en-passant square only when a capture is possible).
func samePosition(a, b *engine.Position) bool {
	if a.SideToMove() != b.SideToMove() || a.CastlingRights() != b.CastlingRights() || a.EnPassant() != b.EnPassant() {
		return false
	}
	for c := engine.White; c <= engine.Black; c++ {
		for t := engine.Pawn; t <= engine.King; t++ {
			if a.Pieces(c, t) != b.Pieces(c, t) {
				return false
			}
		}
	}
	return true
}

// canMate reports whether side c could still give mate by some series of
// legal moves (FIDE 6.9): false only for a lone king, a lone minor piece
// against a lone king, and bishops on one square colour against bishops on
// the same colour (or a lone king).
func canMate(pos *engine.Position, c engine.Color) bool {
	o := c.Other()
	if pos.Pieces(c, engine.Pawn)|pos.Pieces(c, engine.Rook)|pos.Pieces(c, engine.Queen) != 0 {
		return true
	}
	kn := pos.Pieces(c, engine.Knight).Count()
	bs := pos.Pieces(c, engine.Bishop)
	minors := kn + bs.Count()
	if minors == 0 {
		return false
	}
	oppOthers := pos.ColorPieces(o) &^ pos.Pieces(o, engine.King)
	if minors == 1 && oppOthers == 0 {
		return false
	}
	if kn == 0 && pos.Pieces(o, engine.Bishop) == oppOthers {
		const dark = engine.Bitboard(0xAA55AA55AA55AA55)
		all := bs | pos.Pieces(o, engine.Bishop)
		if all&dark == 0 || all&^dark == 0 {
			return false
		}
	}
	return minors > 0
}

func colorName(c engine.Color) string {
	if c == engine.White {
		return "White"
	}
	return "Black"
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
