package matchplan

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/arbiter-chess/arbiter/match"
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
// out, and returns the verdicts; the first engine that fails (or cannot
// be checked) refuses the match.
func (p *Plan) runGates(ctx context.Context, out io.Writer) ([]GateJSON, error) {
	var gates []GateJSON
	for i, e := range p.Engines {
		if e.MovegenGate == "" {
			continue
		}
		start := time.Now()
		v := verify.GateEngine(ctx, matchspec.GateEngine(e), engineLabel(e, i), gateQueryTimeout, 0)
		if v.Outcome != verify.GatePassed {
			return nil, &GateRefusal{Verdict: v}
		}
		fmt.Fprintf(out, "%s (%.1fs)\n", v.Message, time.Since(start).Seconds())
		gates = append(gates, GateToJSON(v))
	}
	return gates, nil
}

// engineLabel names engine i before it has said its own name: its name,
// or its number and program.
func engineLabel(e match.EngineConfig, i int) string {
	if e.Name != "" {
		return e.Name
	}
	return fmt.Sprintf("#%d (%s)", i+1, e.Cmd)
}

// writeRefusedJSON is --json's answer for a match the gate refused: the
// match's result with status "refused", no game, and the failed verdict.
func writeRefusedJSON(w io.Writer, p *Plan, r *GateRefusal) error {
	s := p.Schedule
	res := Result{Status: "refused", Failure: r.Verdict.Message, Games: 0, Scheduled: s.Len(),
		Schedule: ResultSchedule{Type: string(s.Kind), GauntletSeeds: s.Seeds, Rounds: s.Rounds, Games: s.Games, Repeat: s.Repeat},
		Pairings: []ResultPairing{}, Ratings: []ResultRating{},
		MovegenGate: []GateJSON{GateToJSON(r.Verdict)}}
	for i, e := range p.Engines {
		res.Engines = append(res.Engines, engineLabel(e, i))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
