package verify

// The movegen gate: a quick check, before a test plays its first game,
// that an engine's move generator agrees with Arbiter's on a fixed suite
// of positions chosen for the rules generators get wrong (castling through
// or out of check, e.p. captures that expose the king, promotions, pins,
// checks, Chess960 castling). A mismatch is descended (Verify) to the
// exact position and move, and the verdict names the engine, that
// position and the divide lines that differ there.
//
// Invariants: the suite is fixed (a verdict depends only on the engine's
// build), small (every position at depth ≤ 3: seconds, not minutes, on a
// loaded worker), and its counts are Arbiter's own (no table to keep in
// step with it). A verdict is one of three: passed, failed (a finding or
// an engine that does not answer `go perft`: the same on every worker),
// or unsure (the engine crashed, hung or did not start: a worker's
// trouble, worth trying elsewhere).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// GateProtoUCI is the one gate protocol so far: `go perft N` on the
// engine's own program (a test's engine speaks UCI already).
const GateProtoUCI = "uci"

// GateSuite is the gate's fixed suite. IDs name the rule each position
// is there for; the messages quote them.
var GateSuite = []Target{
	{ID: "start", FEN: engine.StartFEN, Depth: 3},
	{ID: "kiwipete: castling, e.p., pins", FEN: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Depth: 2},
	{ID: "castling through attacked squares", FEN: "r3k2r/1b4bq/8/8/8/8/7B/R3K2R w KQkq - 0 1", Depth: 2},
	{ID: "castling rights after rook moves", FEN: "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", Depth: 3},
	{ID: "e.p. capture exposing the king on the rank", FEN: "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", Depth: 3},
	{ID: "e.p. capture that evades check", FEN: "8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1", Depth: 3},
	{ID: "e.p. pinned pawn", FEN: "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1", Depth: 3},
	{ID: "promotions and underpromotions", FEN: "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", Depth: 3},
	{ID: "promotion out of check", FEN: "2K2r2/4P3/8/8/8/8/8/3k4 w - - 0 1", Depth: 3},
	{ID: "checks, pins, promotions (position 4)", FEN: "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", Depth: 2},
	{ID: "discovered checks (position 5)", FEN: "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", Depth: 2},
	{ID: "Chess960: king that stays, rook onto the king's square", FEN: "r2k4/8/8/8/8/8/8/6KR w Ha - 0 1", Depth: 2, Chess960: true},
	{ID: "Chess960: castling beside other pieces", FEN: "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", Depth: 3, Chess960: true},
}

// GateOutcome is what the gate decided.
type GateOutcome int

const (
	// GatePassed: every position agreed.
	GatePassed GateOutcome = iota + 1
	// GateFailed: the generator is wrong (Report holds the findings), or
	// the engine does not answer `go perft` (NoPerft). Every worker would
	// say the same: the test must not start.
	GateFailed
	// GateUnsure: the engine failed in a way that says nothing of its
	// generator (it did not start, crashed or timed out): try again, or
	// on another machine.
	GateUnsure
)

// GateVerdict is the gate's answer for one engine.
type GateVerdict struct {
	Outcome GateOutcome
	// Engine is the name the verdict gives the engine (the test's).
	Engine string
	// Target is the suite position that failed (Outcome GateFailed) or
	// where the engine failed (GateUnsure).
	Target Target
	// Report is verify's report on Target when the generator is wrong.
	Report *Report
	// NoPerft: the engine gave no perft answer (it searched, or printed
	// no total).
	NoPerft bool
	// Differ are the divide lines that differ at the first finding's
	// position: "e1g1: engine 26, exact 0".
	Differ []string
	// Skipped says which positions were not asked and why (a UCI engine
	// without UCI_Chess960 is not asked the Chess960 ones).
	Skipped []string
	// Message is the verdict as a person reads it.
	Message string
}

// Finding is the first finding of a failed gate (nil otherwise).
func (v *GateVerdict) Finding() *Finding {
	if v.Report == nil || len(v.Report.Findings) == 0 {
		return nil
	}
	return &v.Report.Findings[0]
}

// WrongMoves are the moves of the first finding the engine lists but
// are illegal, and those it misses.
func (v *GateVerdict) WrongMoves() (illegal, missed []string) {
	f := v.Finding()
	if f == nil {
		return nil, nil
	}
	for _, m := range f.Illegal {
		illegal = append(illegal, m.Move)
	}
	for _, m := range f.Missed {
		missed = append(missed, m.Move)
	}
	return illegal, missed
}

// gateFindings bounds a gate's descent: the first finding is the
// verdict, a few more cost little and help the engine's author.
const (
	gateFindings = 3
	gateProbes   = 60
)

// Gate runs the suite through eng (named name in the verdict). threads
// bounds Arbiter's own perft (0: all cores).
func Gate(ctx context.Context, eng Engine, name string, threads int) GateVerdict {
	v := GateVerdict{Engine: name}
	for _, t := range GateSuite {
		if ctx.Err() != nil {
			v.Outcome, v.Target = GateUnsure, t
			v.Message = fmt.Sprintf("movegen gate of engine %q: stopped (%v)", name, ctx.Err())
			return v
		}
		rep := Verify(ctx, eng, t, Options{MaxFindings: gateFindings, MaxProbes: gateProbes, Threads: threads})
		switch {
		case rep.Status == "ok":
			continue
		case rep.Status == "bug":
			v.Outcome, v.Target, v.Report = GateFailed, t, &rep
			v.Differ = differAt(ctx, eng, v.Finding(), t.Chess960, threads)
			v.Message = v.failMessage()
			return v
		case rep.EngineError != nil && rep.EngineError.Kind == "protocol" && t.Chess960:
			v.Skipped = append(v.Skipped, fmt.Sprintf("%q: %s", t.ID, rep.EngineError.Msg))
			continue
		case rep.EngineError != nil && (rep.EngineError.Kind == "garbage" || rep.EngineError.Kind == "protocol"):
			v.Outcome, v.Target, v.NoPerft = GateFailed, t, true
			v.Message = fmt.Sprintf("movegen gate: engine %q does not answer `go perft` (Stockfish's perft extension), so its move generator cannot be checked; "+
				"drop perft-gate= for it or give it a `go perft N` with divide lines and a total: %s", name, rep.Error)
			return v
		default:
			v.Outcome, v.Target = GateUnsure, t
			v.Message = fmt.Sprintf("movegen gate of engine %q at %q: %s", name, t.ID, rep.Error)
			return v
		}
	}
	v.Outcome = GatePassed
	v.Message = fmt.Sprintf("movegen gate: engine %q agrees with Arbiter on all %d positions", name, len(GateSuite)-len(v.Skipped))
	return v
}

// failMessage names the engine, the exact position (and how the suite
// position reaches it), what is wrong in its move list there, and the
// divide that differs.
func (v *GateVerdict) failMessage() string {
	t := v.Target
	var b strings.Builder
	fmt.Fprintf(&b, "movegen gate: engine %q has a move generator bug", v.Engine)
	f := v.Finding()
	if f == nil {
		fmt.Fprintf(&b, " at %q (%s, depth %d): %s", t.ID, t.FEN, t.Depth, v.Report.ReferenceMismatch)
		return b.String()
	}
	fmt.Fprintf(&b, " at position %s", f.FEN)
	if len(f.Moves) > 0 {
		fmt.Fprintf(&b, " (reached by %s from", strings.Join(f.Moves, " "))
	} else {
		b.WriteString(" (the suite's")
	}
	fmt.Fprintf(&b, " %q, %s, depth %d)", t.ID, t.FEN, t.Depth)
	var what []string
	for _, m := range f.Illegal {
		what = append(what, "lists illegal "+m.Move+" ("+m.Reason+")")
	}
	for _, m := range f.Missed {
		what = append(what, "misses legal "+m.Move+" ("+m.Reason+")")
	}
	what = append(what, f.Notes...)
	if len(what) > 0 {
		b.WriteString(": " + strings.Join(what, "; "))
	}
	if len(v.Differ) > 0 {
		fmt.Fprintf(&b, "; divide at depth %d there: %s", max(f.Depth, 1), strings.Join(v.Differ, ", "))
	}
	return b.String()
}

// maxDifferLines bounds the divide lines a verdict quotes.
const maxDifferLines = 8

// differAt asks the engine once more for its divide at the finding's
// position and lists the lines that differ from Arbiter's ("" when the
// engine fails now: the finding stands on its own).
func differAt(ctx context.Context, eng Engine, f *Finding, chess960 bool, threads int) []string {
	if f == nil {
		return nil
	}
	depth := max(f.Depth, 1)
	theirs, err := eng.Divide(ctx, Query{FEN: f.RootFEN, Moves: f.Moves, Depth: depth, Chess960: chess960})
	if err != nil {
		return nil
	}
	pos, err := engine.ParseFEN(f.FEN)
	if err != nil {
		return nil
	}
	pos.SetChess960(chess960)
	ours, err := engine.RunPerft(ctx, pos, depth, engine.PerftOptions{Threads: threads})
	if err != nil {
		return nil
	}
	exact := map[string]engine.Count{}
	for _, e := range ours.Divide {
		exact[e.UCI] = e.Nodes
	}
	var out []string
	seen := map[string]bool{}
	for _, l := range theirs.Lines {
		seen[l.Move] = true
		if n, ok := exact[l.Move]; !ok || n != l.Nodes {
			out = append(out, fmt.Sprintf("%s: engine %s, exact %s", l.Move, l.Nodes, orNone(n, ok)))
		}
	}
	for _, e := range ours.Divide {
		if !seen[e.UCI] {
			out = append(out, fmt.Sprintf("%s: engine none, exact %s", e.UCI, e.Nodes))
		}
	}
	if len(out) > maxDifferLines {
		out = append(out[:maxDifferLines], fmt.Sprintf("and %d more", len(out)-maxDifferLines))
	}
	return out
}

func orNone(n engine.Count, ok bool) string {
	if !ok {
		return "none (not a legal move)"
	}
	return n.String()
}

// ErrGateProto is the error of a gate protocol other than GateProtoUCI.
var ErrGateProto = errors.New(`want "uci" (the engine answers go perft)`)

// CheckGateProto checks a gate protocol as a test gives it.
func CheckGateProto(p string) error {
	if p != GateProtoUCI {
		return ErrGateProto
	}
	return nil
}

// GateEngine starts the engine of spec, runs the gate through it (each
// query bounded by timeout) and stops it. An engine that does not start is
// an unsure verdict: the program may be missing on this machine only.
func GateEngine(ctx context.Context, spec EngineSpec, name string, timeout time.Duration, threads int) GateVerdict {
	eng, err := Open(ctx, spec, timeout)
	if err != nil {
		return GateVerdict{Outcome: GateUnsure, Engine: name, Target: GateSuite[0],
			Message: fmt.Sprintf("movegen gate of engine %q: %v", name, err)}
	}
	defer eng.Close()
	return Gate(ctx, eng, name, threads)
}
