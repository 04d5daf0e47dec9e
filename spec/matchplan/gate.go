package matchplan

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/verify"
)

// The movegen gate of a local match: each engine with perft-gate= goes
// through verify's gate before the first game, and a failed gate refuses
// the match (a GateRefusal) before any game is played. A resumed match
// runs the gate again: it costs seconds, and the program may have changed.

// gateQueryTimeout bounds one perft query of the gate: the suite's
// depths take an engine milliseconds, a loaded machine may need seconds.
const gateQueryTimeout = 60 * time.Second

// GateRefusal is a match refused by the movegen gate.
type GateRefusal struct{ Verdict verify.GateVerdict }

func (r *GateRefusal) Error() string { return r.Verdict.Message }

// GateJSON is a gate's verdict as the --json result shows it.
type GateJSON struct {
	Engine   string   `json:"engine"`
	Passed   bool     `json:"passed"`
	NoPerft  bool     `json:"no_perft,omitempty"`
	Suite    string   `json:"suite_position,omitempty"`
	RootFEN  string   `json:"root_fen,omitempty"`
	Depth    int      `json:"depth,omitempty"`
	Chess960 bool     `json:"chess960,omitempty"`
	Moves    []string `json:"moves,omitempty"`
	FEN      string   `json:"fen,omitempty"`
	Illegal  []string `json:"illegal,omitempty"`
	Missed   []string `json:"missed,omitempty"`
	Divide   []string `json:"divide,omitempty"`
	Skipped  []string `json:"skipped,omitempty"`
	Message  string   `json:"message"`
}

// GateToJSON is v as --json shows it.
func GateToJSON(v verify.GateVerdict) GateJSON {
	j := GateJSON{Engine: v.Engine, Passed: v.Outcome == verify.GatePassed, NoPerft: v.NoPerft, Skipped: v.Skipped, Message: v.Message, Divide: v.Differ}
	if v.Outcome == verify.GatePassed {
		return j
	}
	j.Suite, j.RootFEN, j.Depth, j.Chess960 = v.Target.ID, v.Target.FEN, v.Target.Depth, v.Target.Chess960
	if f := v.Finding(); f != nil {
		j.Moves, j.FEN = f.Moves, f.FEN
	}
	j.Illegal, j.Missed = v.WrongMoves()
	return j
}

// runGates gates every engine that asks for it, printing a line each to
// out; the first engine that fails (or cannot be checked) refuses the
// match.
func (p *Plan) runGates(ctx context.Context, out io.Writer) error {
	for i, e := range p.Engines {
		if e.MovegenGate == "" {
			continue
		}
		name := e.Name
		if name == "" {
			name = fmt.Sprintf("#%d (%s)", i+1, e.Cmd)
		}
		start := time.Now()
		v := verify.GateEngine(ctx, matchspec.GateEngine(e), name, gateQueryTimeout, 0)
		if v.Outcome != verify.GatePassed {
			return &GateRefusal{Verdict: v}
		}
		fmt.Fprintf(out, "%s (%.1fs)\n", v.Message, time.Since(start).Seconds())
	}
	return nil
}

// writeGateJSON is --json's answer for a match the gate refused.
func writeGateJSON(w io.Writer, r *GateRefusal) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Status      string   `json:"status"`
		Failure     string   `json:"failure"`
		MovegenGate GateJSON `json:"movegen_gate"`
	}{"refused", r.Verdict.Message, GateToJSON(r.Verdict)})
}
