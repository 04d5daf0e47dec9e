package gamepair

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/wire/gamelabel"
)

// A game counts only if it is a game. ReplayBatch plays every PGN of a
// batch result again, move by move, from the opening the batch gave its
// pair, and refuses the batch unless each game is one the worker's game
// loop (match.PlayGame) could have produced and its recorded outcome is
// the one the moves support:
//
//   - the tags name the pair's engines with colours swapped (engine A is
//     White in the first game of each pair), the FEN tag is the opening's,
//     and the Result tag, the result token and the structured outcome agree;
//   - the moves begin with the opening's and are legal; no engine move is
//     made in a position the rules had already ended, nor after an
//     adjudication of the test's thresholds (on the scores in the move
//     comments) had ended the game;
//   - the end is supported: a rules end (mate, stalemate, insufficient
//     material, fifty moves, repetition) by the final position, an
//     adjudication by the scores and the test's thresholds, a resignation
//     only by an xboard engine (UCI has none), and an engine failure (time
//     forfeit, illegal move, crash, stall, abandoned) by an incident of the
//     batch naming the losing engine in that game; a flag fall is a draw
//     exactly when the side with time cannot mate.
//
// The W/D/L and pentanomial are then the outcomes' (CheckResult checks
// that), so every count of an accepted batch comes from replayed games.
//
// What a replay cannot see: a time loss is taken from the worker's incident
// (the flagging move is not in the record); incidents of time and hangs
// count against the worker (BadGames), crashes and illegal moves against
// the engine. Moves themselves can be invented legally; where both engines
// are deterministic at fixed nodes, a replay by another identity catches
// that (crosscheck.go).
//
// ReplayBatch is pure: no I/O, no clock. Its cost is one legal-move
// generation and one repetition scan per ply (BenchmarkReplayBatch).

// ReasonInvalidGame is the reason of a batch whose games do not replay.
const ReasonInvalidGame = apierr.ReasonInvalidGame

// InvalidGame is the error of a batch with a game that does not replay.
func InvalidGame(format string, args ...any) error {
	return apierr.New(apierr.InvalidArgument, apierr.ReasonInvalidGame, format, args...)
}

// ReplayBatch replays every game of r (already shaped by CheckResult)
// against b, the batch as it was leased (openings of its pairs, engines,
// time controls, adjudication). unit names the batch in errors.
func ReplayBatch(unit string, b *arbiterv1.GamePairBatch, r *arbiterv1.GamePairBatchResult) error {
	return ReplayBatchTables(unit, b, r, nil)
}

// ReplayBatchTables is ReplayBatch with the coordinator's Syzygy tables
// (nil: none), against which tablebase adjudications are checked
// (checkTablebaseEnd).
func ReplayBatchTables(unit string, b *arbiterv1.GamePairBatch, r *arbiterv1.GamePairBatchResult, tables match.TBProber) error {
	u := apierr.Q(unit)
	per := int(max(b.GetPairsPerOpening(), 1))
	ops := b.GetOpenings()
	games := r.GetPgns()
	if len(games) != 2*per*len(ops) {
		return Malformed("unit %s has %d games; the result has %d PGNs", u, 2*per*len(ops), len(games))
	}
	outcomes := make([]*arbiterv1.GameOutcome, len(games))
	for _, o := range r.GetGames() {
		if k := o.GetGameIndex(); k < uint32(len(games)) {
			outcomes[k] = o
		}
	}
	incs := make([][]incidentOf, len(games))
	for _, inc := range r.GetIncidents() {
		if k := inc.GetGameIndex(); k < uint32(len(games)) {
			incs[k] = append(incs[k], incidentOf{kind: inc.GetKind(), engine: inc.GetEngine()})
		}
	}
	var sides [2]side // engine A, engine B
	for i, e := range []*arbiterv1.EngineSpec{b.GetEngineA(), b.GetEngineB()} {
		lim, err := matchspec.LimitsFromProto(matchspec.EngineTimeControl(b.GetTimeControl(), e), 1)
		if err != nil {
			return InvalidGame("unit %s: engine %s: time control: %v", u, apierr.Q(e.GetName()), err)
		}
		sides[i] = side{name: e.GetName(), xboard: e.GetProtocol() == "xboard", clock: lim.HasClock(), timed: !lim.Clockless()}
	}
	rp := replayer{adj: matchspec.AdjudicationFromProto(b.GetAdjudication()), chess960: b.GetChess960()}
	if rule := rp.adj.Tablebase; rule.Pieces > 0 {
		rp.tb = &match.TablebaseAdjudication{TBRule: rule, Tables: tables}
	}
	for k, pgn := range games {
		o := outcomes[k]
		if o == nil {
			return Malformed("unit %s: game %d has no outcome", u, k)
		}
		white, black := sides[0], sides[1]
		if k%2 == 1 {
			white, black = black, white
		}
		if err := rp.replay(pgn, ops[k/2/per], [2]side{white, black}, o, incs[k]); err != nil {
			return InvalidGame("unit %s: game %d: %v", u, k, err)
		}
	}
	return nil
}

// side is what a replay needs of the engine playing one colour.
type side struct {
	name   string
	xboard bool // may resign on its own
	clock  bool // plays under a clock: a flag fall draws when the opponent cannot mate
	timed  bool // under a clock or a move time: it can lose on time
}

type incidentOf struct {
	kind   arbiterv1.IncidentKind
	engine string
}

// replayer replays games one after the other, reusing its scratch.
type replayer struct {
	adj      match.Adjudication
	judge    match.Adjudicator
	tb       *match.TablebaseAdjudication // the test's tablebase rule (nil: off), Tables the coordinator's
	chess960 bool
	hist     []engine.Position
	text     gameText
}

// gameText is a PGN split into what a replay reads.
type gameText struct {
	fen, white, black, result string
	hasFEN                    bool
	moves                     []moveText
	token                     string // the result token that ends the movetext
	last                      string // the movetext's last comment (the game loop's reason)
}

type moveText struct {
	san     string
	comment string // the comment right after the move ("" without)
}

func (rp *replayer) replay(pgn string, op *arbiterv1.Opening, sides [2]side, o *arbiterv1.GameOutcome, incs []incidentOf) error {
	g := &rp.text
	if err := splitPGN(pgn, g); err != nil {
		return err
	}
	if g.white != sides[0].name || g.black != sides[1].name {
		return fmt.Errorf("White %s and Black %s; the pair's game has White %s and Black %s",
			apierr.Q(g.white), apierr.Q(g.black), apierr.Q(sides[0].name), apierr.Q(sides[1].name))
	}
	if g.hasFEN != (op.GetFen() != "") || g.fen != op.GetFen() {
		return fmt.Errorf("starts from FEN %s; the pair's opening is %s", apierr.Q(g.fen), apierr.Q(op.GetFen()))
	}
	want := resultToken(o.GetResult())
	if g.result != g.token || g.result != want || want == "*" {
		return fmt.Errorf("Result tag %s, result %s, outcome %s: they must agree on a finished game",
			apierr.Q(g.result), apierr.Q(g.token), apierr.Q(want))
	}

	var err error
	pos := engine.StartPosition()
	if op.GetFen() != "" {
		if pos, err = engine.ParseFEN(op.GetFen()); err != nil {
			return fmt.Errorf("the opening's FEN: %v", err)
		}
	}
	if rp.chess960 || pos.IsChess960() {
		pos.SetChess960(true)
	}
	rp.hist = append(rp.hist[:0], pos)
	book := op.GetMovesUci()
	switch {
	case len(g.moves) == 0 && len(book) > 0 && o.GetTermination() != arbiterv1.GameTermination_GAME_TERMINATION_CRASH:
		// Only a game an engine could not start has no moves of its opening.
		return fmt.Errorf("ends %s without the opening's moves", termWord(o.GetTermination()))
	case len(g.moves) > 0 && len(g.moves) < len(book):
		return fmt.Errorf("%d moves, fewer than the opening's %d", len(g.moves), len(book))
	}

	// The game loop's adjudication state (match.PlayGame).
	rp.judge.Reset(rp.adj)
	var (
		adjudicated = false
		adjResult   match.Result
		adjEnd      match.End
	)
	for i, mv := range g.moves {
		if adjudicated {
			return fmt.Errorf("ply %d is played after an adjudication ended the game", i+1)
		}
		var m engine.Move
		if i < len(book) {
			bm, err := pos.ParseUCIMove(book[i])
			if err != nil {
				return fmt.Errorf("the opening's move %s: %v", apierr.Q(book[i]), err)
			}
			if m, err = pos.ParseSAN(mv.san); err != nil || m != bm {
				return fmt.Errorf("ply %d is %s; the opening plays %s", i+1, apierr.Q(mv.san), book[i])
			}
			rp.push(&pos, m)
			continue
		}
		if r, e, over := match.RulesEnd(&pos, rp.hist); over {
			return fmt.Errorf("ply %d %s is played after the game ended (%s, %s)", i+1, apierr.Q(mv.san), e, r)
		}
		mover := pos.SideToMove()
		if m, err = pos.ParseSAN(mv.san); err != nil {
			return fmt.Errorf("ply %d: %v", i+1, err)
		}
		rp.push(&pos, m)
		score, hasScore := commentScore(mv.comment)

		// Adjudication, on the scores of the move just made, as the game
		// loop does it.
		switch rule, r := rp.judge.Ply(mover, score, hasScore); rule {
		case match.AdjudicationResign, match.AdjudicationDraw:
			adjudicated, adjResult, adjEnd = true, r, match.EndAdjudication
		case match.AdjudicationMaxMoves:
			adjudicated, adjResult, adjEnd = true, match.Draw, match.EndAdjudication
			if r, e, over := match.RulesEnd(&pos, rp.hist); over {
				adjResult, adjEnd = r, e
			}
		}
	}

	claimed := o.GetTermination()
	res := resultOf(o.GetResult())
	if g.last = lastWords(g.last); match.IsTBReason(g.last) {
		return rp.checkTablebaseEnd(&pos, claimed, res, len(g.moves) > len(book))
	}
	if adjudicated {
		if wantEnd := matchspec.EndToProto(adjEnd); claimed != wantEnd || res != adjResult {
			return fmt.Errorf("ends %s %s; its moves and scores end it by %s, %s", termWord(claimed), want, termWord(wantEnd), adjResult)
		}
		return nil
	}
	return rp.checkClaimedEnd(&pos, claimed, res, want, sides, incs)
}

// checkClaimedEnd checks a game not ended by adjudication: a rules end by
// the final position pos, anything else (an engine failure) in a position
// the rules had not ended, with the incident that says so.
func (rp *replayer) checkClaimedEnd(pos *engine.Position, claimed arbiterv1.GameTermination, res match.Result, want string, sides [2]side, incs []incidentOf) error {
	stm := pos.SideToMove()
	rulesResult, rulesEnd, over := match.RulesEnd(pos, rp.hist)
	switch claimed {
	case arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE, arbiterv1.GameTermination_GAME_TERMINATION_STALEMATE,
		arbiterv1.GameTermination_GAME_TERMINATION_REPETITION, arbiterv1.GameTermination_GAME_TERMINATION_FIFTY_MOVES,
		arbiterv1.GameTermination_GAME_TERMINATION_INSUFFICIENT_MATERIAL:
		if !over || matchspec.EndToProto(rulesEnd) != claimed || rulesResult != res {
			if !over {
				return fmt.Errorf("ends %s %s, but the final position is not over by the rules", termWord(claimed), want)
			}
			return fmt.Errorf("ends %s %s; the final position is %s, %s", termWord(claimed), want, rulesEnd, rulesResult)
		}
		return nil
	case arbiterv1.GameTermination_GAME_TERMINATION_ADJUDICATION:
		return fmt.Errorf("ends by adjudication, but the test's thresholds do not end it on its scores")
	}
	// Everything else ends in a position the rules had not ended when the
	// engine to move was asked for a move (an engine that failed before its
	// first move may have failed starting the game instead).
	if over && rp.judge.Plies() > 0 {
		return fmt.Errorf("ends %s, but the final position is already %s", termWord(claimed), rulesEnd)
	}
	switch claimed {
	case arbiterv1.GameTermination_GAME_TERMINATION_RESIGN:
		if !sides[stm].xboard {
			return fmt.Errorf("%s resigns, but only an xboard engine can resign", apierr.Q(sides[stm].name))
		}
		if res != lossOf(stm) {
			return fmt.Errorf("a resignation of the side to move (%s) is %s, not %s", colourName(stm), lossOf(stm), want)
		}
		return nil
	case arbiterv1.GameTermination_GAME_TERMINATION_TIME_FORFEIT:
		if !sides[stm].timed {
			return fmt.Errorf("%s loses on time, but it plays under no clock or move time", apierr.Q(sides[stm].name))
		}
		if !sides[stm].clock {
			// A time forfeit under a move time is a loss; under nodes or
			// depth there is no time to lose (a hang is a stall).
			if res != lossOf(stm) {
				return fmt.Errorf("a time forfeit of the side to move (%s) under a move time is %s, not %s", colourName(stm), lossOf(stm), want)
			}
		} else if w := timeForfeitResult(pos, stm); res != w {
			return fmt.Errorf("a flag fall of the side to move (%s) here is %s, not %s", colourName(stm), w, want)
		}
		return needIncident(incs, sides[stm].name, claimed, arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS, arbiterv1.IncidentKind_INCIDENT_KIND_HANG)
	case arbiterv1.GameTermination_GAME_TERMINATION_ILLEGAL_MOVE, arbiterv1.GameTermination_GAME_TERMINATION_STALL:
		if res != lossOf(stm) {
			return fmt.Errorf("ends %s of the side to move (%s): that is %s, not %s", termWord(claimed), colourName(stm), lossOf(stm), want)
		}
		if claimed == arbiterv1.GameTermination_GAME_TERMINATION_STALL {
			return needIncident(incs, sides[stm].name, claimed, arbiterv1.IncidentKind_INCIDENT_KIND_HANG)
		}
		return needIncident(incs, sides[stm].name, claimed, arbiterv1.IncidentKind_INCIDENT_KIND_ILLEGAL_MOVE, arbiterv1.IncidentKind_INCIDENT_KIND_OTHER)
	case arbiterv1.GameTermination_GAME_TERMINATION_CRASH, arbiterv1.GameTermination_GAME_TERMINATION_UNSPECIFIED,
		arbiterv1.GameTermination_GAME_TERMINATION_ABANDONED:
		// An engine that could not start may be either colour.
		loser := engine.White
		switch res {
		case match.WhiteWins:
			loser = engine.Black
		case match.BlackWins:
		default:
			return fmt.Errorf("ends %s %s: an engine failure loses the game", termWord(claimed), want)
		}
		if claimed == arbiterv1.GameTermination_GAME_TERMINATION_CRASH {
			return needIncident(incs, sides[loser].name, claimed, arbiterv1.IncidentKind_INCIDENT_KIND_CRASH)
		}
		return needIncident(incs, sides[loser].name, claimed, anyIncident)
	}
	return fmt.Errorf("ends %s, which no game loop writes", termWord(claimed))
}

// checkTablebaseEnd checks a game that ends, by its PGN's reason, by
// tablebase adjudication in pos:
//
//   - the test asks for it, the game ends by adjudication, and the last
//     move is an engine's;
//   - pos is not over by the rules and is one the rule probes (50-move
//     counter 0, no castling rights, at most the test's pieces);
//   - when the coordinator's tables have pos's table, their verdict is
//     the game's result and its reason the PGN's. Without that table (no
//     --syzygy, or fewer pieces) the verdict is the worker's word: the
//     claim is accepted on the checks above alone (docs/sprt-cluster.md).
//
// A game that goes on past a position the tables would adjudicate is not
// refused: workers' table sets may differ (an absent table is no verdict).
func (rp *replayer) checkTablebaseEnd(pos *engine.Position, claimed arbiterv1.GameTermination, res match.Result, engineMoved bool) error {
	g := &rp.text
	switch {
	case rp.tb == nil:
		return fmt.Errorf("ends by tablebase adjudication (%s), but the test asks for none", apierr.Q(g.last))
	case claimed != arbiterv1.GameTermination_GAME_TERMINATION_ADJUDICATION:
		return fmt.Errorf("ends %s with a tablebase adjudication's reason %s", termWord(claimed), apierr.Q(g.last))
	case !engineMoved:
		return fmt.Errorf("ends by tablebase adjudication before any engine move")
	}
	if _, e, over := match.RulesEnd(pos, rp.hist); over {
		return fmt.Errorf("ends by tablebase adjudication in a position already over by the rules (%s)", e)
	}
	rule := &match.TablebaseAdjudication{TBRule: rp.tb.TBRule}
	if !rule.Eligible(pos) {
		return fmt.Errorf("ends by tablebase adjudication in %s, which the rule never probes (it probes at 50-move counter 0, without castling rights, with at most %d pieces)",
			apierr.Q(pos.FEN()), rp.tb.Pieces)
	}
	if want := tbReasonOf(res); g.last != want {
		return fmt.Errorf("ends %s with the reason %s; that result's reason is %s", res, apierr.Q(g.last), apierr.Q(want))
	}
	r, reason, ok, err := rp.tb.Verdict(pos)
	var missing *syzygy.MissingTableError
	switch {
	case rp.tb.Tables == nil || pos.Occupied().Count() > rp.tb.Tables.MaxPieces() || errors.As(err, &missing):
		return nil // not checkable here: the worker's word
	case err != nil:
		return fmt.Errorf("the coordinator's tables cannot check the tablebase adjudication in %s: %v", apierr.Q(pos.FEN()), err)
	case !ok:
		return fmt.Errorf("ends by tablebase adjudication %s in %s; the tables give a verdict the test does not adjudicate (%s)", res, apierr.Q(pos.FEN()), rp.tb.Results)
	case r != res:
		return fmt.Errorf("ends by tablebase adjudication %s in %s; the tables say %s (%s)", res, apierr.Q(pos.FEN()), r, reason)
	}
	return nil
}

// lastWords is a comment with its line breaks (the PGN writer wraps long
// comments) and runs of blanks as single spaces.
func lastWords(c string) string { return strings.Join(strings.Fields(c), " ") }

// tbReasonOf is the game loop's reason of a tablebase adjudication to r.
func tbReasonOf(r match.Result) string {
	switch r {
	case match.WhiteWins:
		return fmt.Sprintf(match.TBWinReasonFormat, "White")
	case match.BlackWins:
		return fmt.Sprintf(match.TBWinReasonFormat, "Black")
	}
	return match.TBDrawReason
}

// anyIncident matches every incident kind in needIncident.
const anyIncident = arbiterv1.IncidentKind(-1)

// needIncident is nil when incs holds an incident of one of kinds naming
// engine: an engine failure ends a game only with the incident that says
// so. The sandbox's verdict (LIMIT) stands for any of them.
func needIncident(incs []incidentOf, engineName string, claimed arbiterv1.GameTermination, kinds ...arbiterv1.IncidentKind) error {
	for _, inc := range incs {
		if inc.engine != engineName {
			continue
		}
		if inc.kind == arbiterv1.IncidentKind_INCIDENT_KIND_LIMIT {
			return nil
		}
		for _, k := range kinds {
			if k == anyIncident || inc.kind == k {
				return nil
			}
		}
	}
	return fmt.Errorf("ends %s of %s, but the batch reports no such incident of it in this game", termWord(claimed), apierr.Q(engineName))
}

// termWord names a termination as the metrics do ("checkmate",
// "time_forfeit").
func termWord(t arbiterv1.GameTermination) string { return gamelabel.Termination(t) }

// timeForfeitResult is the result of a flag fall of c in pos (FIDE 6.9).
func timeForfeitResult(pos *engine.Position, c engine.Color) match.Result {
	if !match.CanMate(pos, c.Other()) {
		return match.Draw
	}
	return lossOf(c)
}

// push makes m and keeps the positions since the last irreversible move.
func (rp *replayer) push(pos *engine.Position, m engine.Move) {
	pos.MakeMove(m)
	if pos.HalfmoveClock() == 0 {
		rp.hist = rp.hist[:0]
	}
	rp.hist = append(rp.hist, *pos)
}

func lossOf(c engine.Color) match.Result {
	if c == engine.White {
		return match.BlackWins
	}
	return match.WhiteWins
}

func colourName(c engine.Color) string {
	if c == engine.White {
		return "White"
	}
	return "Black"
}

func resultOf(r arbiterv1.GameResult) match.Result {
	switch r {
	case arbiterv1.GameResult_GAME_RESULT_WHITE_WINS:
		return match.WhiteWins
	case arbiterv1.GameResult_GAME_RESULT_BLACK_WINS:
		return match.BlackWins
	case arbiterv1.GameResult_GAME_RESULT_DRAW:
		return match.Draw
	}
	return match.NoResult
}

func resultToken(r arbiterv1.GameResult) string { return resultOf(r).String() }

// commentScore reads the score of an engine move's comment as WritePGN
// writes it ("+0.31/12 0.520s", "-M3/20 0.100s", "0.520s" without a
// score) in centipawns (match.Score.Centipawns).
func commentScore(c string) (int, bool) {
	s, _, ok := strings.Cut(strings.TrimSpace(c), "/")
	if !ok || len(s) < 2 {
		return 0, false
	}
	neg := s[0] == '-'
	if s[0] != '-' && s[0] != '+' {
		return 0, false
	}
	s = s[1:]
	if m, ok := strings.CutPrefix(s, "M"); ok {
		n, err := strconv.Atoi(m)
		if err != nil || n <= 0 {
			return 0, false
		}
		if neg {
			return match.Score{Mate: -n}.Centipawns(), true
		}
		return match.Score{Mate: n}.Centipawns(), true
	}
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 2 || len(whole) == 0 || len(whole) > 9 {
		return 0, false
	}
	w, err1 := strconv.Atoi(whole)
	f, err2 := strconv.Atoi(frac)
	if err1 != nil || err2 != nil || w < 0 || f < 0 {
		return 0, false
	}
	cp := 100*w + f
	if neg {
		cp = -cp
	}
	return cp, true
}

// tagPair reads the tag pair `[Key "value"]` that s starts with (the
// value may hold escaped quotes and backslashes, and line breaks) and
// returns the text after it.
func tagPair(s string) (key, val, rest string, ok bool) {
	sp := strings.IndexByte(s, ' ')
	if sp < 2 || sp > 64 || len(s) < sp+2 || s[sp+1] != '"' {
		return "", "", "", false
	}
	key = s[1:sp]
	escaped := false
	for i := sp + 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			escaped = true
			i++
		case c == '"':
			val = s[sp+2 : i]
			if escaped {
				val = strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(val)
			}
			if i+1 >= len(s) || s[i+1] != ']' {
				return "", "", "", false
			}
			return key, val, s[i+2:], true
		}
	}
	return "", "", "", false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// skipSpace is s without its leading white space (strings.TrimLeft builds
// a set on every call; this is the replay's inner loop).
func skipSpace(s string) string {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return s[i:]
}

var errNotWorkerPGN = errors.New("not a PGN game as workers write them")

// splitPGN reads one game as match.WritePGN writes it: tag pairs, then
// movetext of move numbers, SAN moves, brace comments, NAGs and one
// result token, and nothing after it. Variations and line comments are
// refused: no worker writes them. The strings returned are slices of pgn.
func splitPGN(pgn string, g *gameText) error {
	*g = gameText{moves: g.moves[:0]}
	s := pgn
	// Tag pairs.
	for {
		s = skipSpace(s)
		if !strings.HasPrefix(s, "[") {
			break
		}
		key, val, rest, ok := tagPair(s)
		if !ok {
			return fmt.Errorf("%w: tag %s", errNotWorkerPGN, apierr.Quote(s, 80))
		}
		s = rest
		switch key {
		case "White":
			g.white = val
		case "Black":
			g.black = val
		case "Result":
			g.result = val
		case "FEN":
			g.fen, g.hasFEN = val, true
		}
	}
	// Movetext.
	expectComment := false // right after a move: its comment
	for {
		s = skipSpace(s)
		if s == "" {
			return fmt.Errorf("%w: no result token", errNotWorkerPGN)
		}
		switch c := s[0]; {
		case c == '{':
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return fmt.Errorf("%w: an unclosed comment", errNotWorkerPGN)
			}
			if expectComment {
				g.moves[len(g.moves)-1].comment = s[1:end]
			}
			g.last = s[1:end] // resolved to words only when read (lastWords)
			expectComment = false
			s = s[end+1:]
			continue
		case c == '(' || c == ';' || c == '%' || c == '[':
			return fmt.Errorf("%w: %q in the movetext", errNotWorkerPGN, c)
		}
		end := 0
		for end < len(s) && !isSpace(s[end]) && s[end] != '{' {
			end++
		}
		tok := s[:end]
		s = s[end:]
		switch {
		case tok == "1-0" || tok == "0-1" || tok == "1/2-1/2" || tok == "*":
			if strings.TrimSpace(s) != "" {
				return fmt.Errorf("%w: text after the result token", errNotWorkerPGN)
			}
			g.token = tok
			return nil
		case tok[0] >= '0' && tok[0] <= '9':
			if n := strings.TrimRight(tok, "."); n == tok || strings.Trim(n, "0123456789") != "" {
				return fmt.Errorf("%w: %s in the movetext", errNotWorkerPGN, apierr.Quote(tok, 20))
			}
			expectComment = false
		case tok[0] == '$':
			// A NAG: no move.
		default:
			if len(tok) > 12 {
				return fmt.Errorf("%w: %s is no move", errNotWorkerPGN, apierr.Quote(tok, 20))
			}
			g.moves = append(g.moves, moveText{san: tok})
			expectComment = true
		}
	}
}
