// Package matchspec converts between the match library's types and the
// cluster's protobuf messages (engines, time controls, openings,
// adjudication), and checks what the coordinator must refuse at submit: an
// unknown option of the embedded engine, a time control no engine can play,
// a bad opening. The CLI, the coordinator and the worker share it so that a
// test means the same thing everywhere.
package matchspec

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/search"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
)

// Embedded is the EngineSpec command of the built-in engine.
const Embedded = "embedded"

// IsBuiltin reports whether e names the embedded engine.
func IsBuiltin(e *arbiterv1.EngineSpec) bool {
	return e.GetCommand() == Embedded || e.GetProtocol() == "builtin"
}

// EngineToProto renders an engine of `arbiter match`'s command line.
func EngineToProto(e match.EngineConfig) *arbiterv1.EngineSpec {
	s := &arbiterv1.EngineSpec{Name: e.Name, Command: e.Cmd, Args: e.Args, Protocol: e.Proto, Dir: e.Dir, MovegenGate: e.MovegenGate,
		SyzygyPieces: uint32(max(e.SyzygyPieces, 0))}
	if e.Proto == "builtin" {
		s.Command = Embedded
	}
	if len(e.Options) > 0 {
		s.Options = make(map[string]string, len(e.Options))
		for _, o := range e.Options {
			s.Options[o.Name] = o.Value
		}
	}
	return s
}

// EngineFromProto is the match library's engine for s (options by name).
func EngineFromProto(s *arbiterv1.EngineSpec) match.EngineConfig {
	e := match.EngineConfig{Name: s.GetName(), Cmd: s.GetCommand(), Args: s.GetArgs(), Proto: s.GetProtocol(), Dir: s.GetDir(), MovegenGate: s.GetMovegenGate(),
		SyzygyPieces: int(min(s.GetSyzygyPieces(), 1<<16))}
	if IsBuiltin(s) {
		e.Cmd, e.Proto = "", "builtin"
	}
	names := make([]string, 0, len(s.GetOptions()))
	for k := range s.GetOptions() {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		e.Options = append(e.Options, match.Option{Name: k, Value: s.GetOptions()[k]})
	}
	return e
}

// GateEngine is verify's engine for the movegen gate of e (perft-gate=):
// its program, arguments, directory and options, spoken to in UCI.
func GateEngine(e match.EngineConfig) verify.EngineSpec {
	s := verify.EngineSpec{Cmd: e.Cmd, Args: e.Args, Dir: e.Dir, Proto: verify.ProtoUCI}
	for _, o := range e.Options {
		s.Options = append(s.Options, verify.Option{Name: o.Name, Value: o.Value})
	}
	return s
}

// LimitsToProto renders limits; the cluster takes one kind of limit (a
// clock, nodes, depth or move time), not combinations.
func LimitsToProto(l match.Limits) (*arbiterv1.TimeControl, error) {
	n := 0
	for _, set := range []bool{l.HasClock(), l.Nodes > 0, l.Depth > 0, l.MoveTime > 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("time control %q: a cluster test takes exactly one of tc=, nodes=, depth=, movetime=", l.String())
	}
	switch {
	case l.HasClock():
		return &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Clock{Clock: &arbiterv1.ClockControl{
			Base: durationpb.New(l.Base), Increment: durationpb.New(l.Inc), MovesToGo: uint32(l.MovesToGo)}}}, nil
	case l.Nodes > 0:
		return &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: uint64(l.Nodes)}}, nil
	case l.Depth > 0:
		return &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Depth{Depth: uint32(l.Depth)}}, nil
	}
	return &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_MoveTime{MoveTime: durationpb.New(l.MoveTime)}}, nil
}

// LimitsFromProto is the match library's limits for tc, with clocks and move
// times multiplied by scale (node and depth limits are never scaled).
func LimitsFromProto(tc *arbiterv1.TimeControl, scale float64) (match.Limits, error) {
	var l match.Limits
	if scale <= 0 {
		scale = 1
	}
	sc := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	switch k := tc.GetKind().(type) {
	case *arbiterv1.TimeControl_Clock:
		l.Base, l.Inc, l.MovesToGo = sc(k.Clock.GetBase().AsDuration()), sc(k.Clock.GetIncrement().AsDuration()), int(k.Clock.GetMovesToGo())
	case *arbiterv1.TimeControl_Nodes:
		if k.Nodes > 1<<50 {
			return l, fmt.Errorf("nodes=%d is out of range", k.Nodes)
		}
		l.Nodes = int64(k.Nodes)
	case *arbiterv1.TimeControl_Depth:
		l.Depth = int(k.Depth)
	case *arbiterv1.TimeControl_MoveTime:
		l.MoveTime = sc(k.MoveTime.AsDuration())
	default:
		return l, fmt.Errorf("time control missing: give tc=, nodes=, depth= or movetime=")
	}
	if err := l.Validate(); err != nil {
		return l, err
	}
	return l, nil
}

// EngineTimeControl is the time control engine e plays under: its own
// when it has one (time or node odds), else the test's.
func EngineTimeControl(test *arbiterv1.TimeControl, e *arbiterv1.EngineSpec) *arbiterv1.TimeControl {
	if tc := e.GetTimeControl(); tc != nil {
		return tc
	}
	return test
}

// LimitsOfEngines are the limits each of a test's engines plays under
// (EngineTimeControl), unscaled, and whether they differ.
func LimitsOfEngines(test *arbiterv1.TimeControl, a, b *arbiterv1.EngineSpec) (lim [2]match.Limits, differ bool, err error) {
	for i, e := range []*arbiterv1.EngineSpec{a, b} {
		if lim[i], err = LimitsFromProto(EngineTimeControl(test, e), 1); err != nil {
			return lim, false, fmt.Errorf("engine %q: %w", e.GetName(), err)
		}
	}
	return lim, lim[0] != lim[1], nil
}

// DescribeLimits describes a test's time controls as `arbiter match` does:
// one, or each engine's in order when they differ ("tc=2+0.02 vs
// tc=1+0.01": time odds); "?" for a time control that cannot be read.
func DescribeLimits(test *arbiterv1.TimeControl, a, b *arbiterv1.EngineSpec) string {
	lim, differ, err := LimitsOfEngines(test, a, b)
	switch {
	case err != nil:
		return "?"
	case differ:
		return lim[0].String() + " vs " + lim[1].String()
	}
	return lim[0].String()
}

// CheckPlayable refuses limits that no engine can play: clocks so short that
// process and pipe latency alone lose the game, absurdly long ones, depths
// beyond any search.
func CheckPlayable(l match.Limits) error {
	switch {
	case l.HasClock() && l.Base < 50*time.Millisecond:
		return fmt.Errorf("tc=%s: a base time under 0.05 s cannot be played (latency alone flags)", l.PGNTimeControl())
	case l.HasClock() && l.MovesToGo == 0 && l.Base+40*l.Inc < 200*time.Millisecond:
		return fmt.Errorf("tc=%s: under 0.2 s for 40 moves cannot be played", l.PGNTimeControl())
	case l.Base > 24*time.Hour || l.Inc > time.Hour || l.MoveTime > time.Hour:
		return fmt.Errorf("time control %s is longer than a day per game", l.String())
	case l.MoveTime > 0 && l.MoveTime < 5*time.Millisecond:
		return fmt.Errorf("movetime=%d: under 5 ms per move cannot be played", l.MoveTime.Milliseconds())
	case l.Depth > 128:
		return fmt.Errorf("depth=%d: beyond 128 plies a game never ends", l.Depth)
	}
	return nil
}

// CheckBuiltinOptions refuses an option the embedded engine does not have,
// or a value out of its range, without building an engine (a Hash of 16 GB
// would allocate it).
func CheckBuiltinOptions(engineName string, options map[string]string) error {
	e, err := search.NewEngine(map[string]string{search.OptHash: "1"})
	if err != nil {
		return err
	}
	specs := e.Options()
	if err := search.CheckEvalWeights(options); err != nil {
		return fmt.Errorf("engine %q: %w", engineName, err)
	}
	for name, value := range options {
		i := slices.IndexFunc(specs, func(s search.OptionSpec) bool { return strings.EqualFold(s.Name, name) })
		if i < 0 {
			return fmt.Errorf("engine %q: unknown option %q of the embedded engine", engineName, name)
		}
		sp := specs[i]
		check := map[string]string{search.OptHash: "1"}
		switch sp.Type {
		case "button":
			return fmt.Errorf("engine %q: option %q is a button, not a setting", engineName, sp.Name)
		case "spin", "check", "string":
			if strings.EqualFold(sp.Name, search.OptHash) {
				if err := checkSpin(value, sp); err != nil {
					return fmt.Errorf("engine %q: %w", engineName, err)
				}
				break
			}
			check[sp.Name] = value
			if strings.EqualFold(sp.Name, search.OptUseNNUE) {
				// UseNNUE needs a net: the EvalFile given beside it, if any.
				for n, v := range options {
					if strings.EqualFold(n, search.OptEvalFile) {
						check[search.OptEvalFile] = v
					}
				}
			}
		}
		if _, err := search.NewEngine(check); err != nil {
			return fmt.Errorf("engine %q: %w", engineName, err)
		}
	}
	return nil
}

func checkSpin(value string, sp search.OptionSpec) error {
	var v int
	if _, err := fmt.Sscanf(strings.TrimSpace(value), "%d", &v); err != nil {
		return fmt.Errorf("option %q: value %q is not an integer", sp.Name, value)
	}
	if v < sp.Min || v > sp.Max {
		return fmt.Errorf("option %q: value %d out of range [%d, %d]", sp.Name, v, sp.Min, sp.Max)
	}
	return nil
}

// OpeningToProto renders an opening.
func OpeningToProto(o match.Opening) *arbiterv1.Opening {
	return &arbiterv1.Opening{Index: uint32(o.ID), Fen: o.FEN, MovesUci: o.Moves}
}

// OpeningFromProto parses and replays an opening: a bad FEN or an illegal
// move is an error naming it.
func OpeningFromProto(o *arbiterv1.Opening, chess960 bool) (match.Opening, error) {
	op := match.Opening{ID: int(o.GetIndex()), FEN: o.GetFen(), Moves: o.GetMovesUci(), Chess960: chess960}
	pos := engine.StartPosition()
	if o.GetFen() != "" {
		p, err := engine.ParseFEN(o.GetFen())
		if err != nil {
			return op, fmt.Errorf("opening %d: FEN %q: %v", o.GetIndex(), o.GetFen(), err)
		}
		pos = p
		op.Chess960 = op.Chess960 || p.IsChess960()
	}
	if op.Chess960 {
		pos.SetChess960(true)
	}
	for _, s := range o.GetMovesUci() {
		m, err := pos.ParseUCIMove(s)
		if err != nil {
			return op, fmt.Errorf("opening %d: move %q: %v", o.GetIndex(), s, err)
		}
		pos.MakeMove(m)
	}
	return op, nil
}

// AdjudicationToProto renders adjudication rules.
func AdjudicationToProto(a match.Adjudication) *arbiterv1.Adjudication {
	return &arbiterv1.Adjudication{ResignScoreCp: int32(a.ResignScore), ResignMoveCount: uint32(a.ResignMoves),
		DrawScoreCp: int32(a.DrawScore), DrawMoveCount: uint32(a.DrawMoves), DrawMoveNumber: uint32(a.DrawMoveNumber),
		MaxMoves: uint32(a.MaxMoves), Tablebase: tbRuleToProto(a.Tablebase)}
}

// AdjudicationFromProto is the match library's adjudication for a.
func AdjudicationFromProto(a *arbiterv1.Adjudication) match.Adjudication {
	return match.Adjudication{ResignScore: int(a.GetResignScoreCp()), ResignMoves: int(a.GetResignMoveCount()),
		DrawScore: int(a.GetDrawScoreCp()), DrawMoves: int(a.GetDrawMoveCount()), DrawMoveNumber: int(a.GetDrawMoveNumber()),
		MaxMoves: int(a.GetMaxMoves()), Tablebase: tbRuleFromProto(a.GetTablebase())}
}

// MaxNPS bounds a bench speed anyone gives: a test's reference nps
// (refused at submit above it) and a worker's --bench-nps.
const MaxNPS = 1e12

// GameSeconds estimates one game's wall time under l at nps (bench nodes
// per second of one thread): batch sizing uses it.
func GameSeconds(l match.Limits, nps float64) float64 {
	const plies = 120 // a typical game, both sides
	if nps <= 0 {
		nps = 1e6
	}
	switch {
	case l.HasClock():
		per := l.Base.Seconds() + 60*l.Inc.Seconds()
		if l.MovesToGo > 0 {
			per = l.Base.Seconds() * 60 / float64(l.MovesToGo)
		}
		return 2 * per * 0.8
	case l.MoveTime > 0:
		return plies * l.MoveTime.Seconds()
	case l.Nodes > 0:
		return plies * (float64(l.Nodes)/nps + 0.0005)
	}
	// Depth: grows about 2× per ply from ~1k nodes at depth 1.
	return plies * (1000 * float64(int64(1)<<min(l.Depth, 40)) / 2 / nps)
}

// EndToProto is the wire's termination for a game's end.
func EndToProto(e match.End) arbiterv1.GameTermination {
	switch e {
	case match.EndCheckmate:
		return arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE
	case match.EndStalemate:
		return arbiterv1.GameTermination_GAME_TERMINATION_STALEMATE
	case match.EndRepetition:
		return arbiterv1.GameTermination_GAME_TERMINATION_REPETITION
	case match.EndFiftyMoves:
		return arbiterv1.GameTermination_GAME_TERMINATION_FIFTY_MOVES
	case match.EndInsufficientMaterial:
		return arbiterv1.GameTermination_GAME_TERMINATION_INSUFFICIENT_MATERIAL
	case match.EndResign:
		return arbiterv1.GameTermination_GAME_TERMINATION_RESIGN
	case match.EndAdjudication:
		return arbiterv1.GameTermination_GAME_TERMINATION_ADJUDICATION
	case match.EndTimeForfeit:
		return arbiterv1.GameTermination_GAME_TERMINATION_TIME_FORFEIT
	case match.EndIllegalMove:
		return arbiterv1.GameTermination_GAME_TERMINATION_ILLEGAL_MOVE
	case match.EndCrash:
		return arbiterv1.GameTermination_GAME_TERMINATION_CRASH
	case match.EndStall:
		return arbiterv1.GameTermination_GAME_TERMINATION_STALL
	case match.EndAbandoned:
		return arbiterv1.GameTermination_GAME_TERMINATION_ABANDONED
	}
	return arbiterv1.GameTermination_GAME_TERMINATION_UNSPECIFIED
}

// ResultToProto is the wire's result (from White's side) for r.
func ResultToProto(r match.Result) arbiterv1.GameResult {
	switch r {
	case match.WhiteWins:
		return arbiterv1.GameResult_GAME_RESULT_WHITE_WINS
	case match.BlackWins:
		return arbiterv1.GameResult_GAME_RESULT_BLACK_WINS
	case match.Draw:
		return arbiterv1.GameResult_GAME_RESULT_DRAW
	}
	return arbiterv1.GameResult_GAME_RESULT_NONE
}

// OutcomeToProto is how game index of a batch ended, for the wire.
func OutcomeToProto(index int, g *match.GameRecord) *arbiterv1.GameOutcome {
	return &arbiterv1.GameOutcome{GameIndex: uint32(index), Result: ResultToProto(g.Result),
		Termination: EndToProto(g.End), Reason: g.Reason}
}
