package perft

import (
	"context"
	"errors"
	"fmt"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftsplit"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// MaxSuitePositions bounds the positions of one suite job; MaxSuiteFirst
// the number of its first position.
const (
	MaxSuitePositions = 10000
	MaxSuiteFirst     = 1 << 20
)

// checkSuite parses a suite spec's positions into in.suite, each refused
// by its number, and checks the suite's size and its estimated nodes,
// summed over the positions, against the coordinator's node limit.
func (w *Workload) checkSuite(spec *arbiterv1.PerftSpec, in *specIn) error {
	fens, first := spec.GetSuite(), int(spec.GetSuiteFirst())
	if len(fens) > MaxSuitePositions {
		return apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "suite of %d positions: at most %d", len(fens), MaxSuitePositions)
	}
	if first > MaxSuiteFirst {
		return apierr.Invalid("suite first number %d: at most %d", first, MaxSuiteFirst)
	}
	if in.depth < 1 {
		return apierr.Invalid("depth %d: a suite needs depth 1 or more", in.depth)
	}
	in.suite = make([]engine.Position, len(fens))
	var est float64
	for i, fen := range fens {
		if len(fen) > 256 {
			return apierr.Invalid("suite position %d: FEN longer than 256 bytes", first+i)
		}
		pos, err := engine.ParseFEN(fen)
		if err != nil {
			return apierr.Invalid("suite position %d: invalid FEN %s: %v", first+i, apierr.Q(fen), err)
		}
		if spec.GetChess960() {
			pos.SetChess960(true)
		}
		in.suite[i] = pos
		est += perftsplit.EstimateNodes(pos, in.depth)
	}
	in.chess960 = suiteChess960(in.suite)
	if est > w.cfg.MaxNodes {
		return apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge,
			"depth %d over these %d positions is about %s nodes, over the limit of %s (coordinator flag %s): ask for a smaller depth or fewer positions",
			in.depth, len(fens), sci(est), sci(w.cfg.MaxNodes), FlagMaxNodes)
	}
	return nil
}

// suiteChess960 reports whether any position of a suite is Chess960: the
// job is then run in Chess960 notation (a standard position counts the
// same either way).
func suiteChess960(suite []engine.Position) bool {
	for i := range suite {
		if suite[i].IsChess960() {
			return true
		}
	}
	return false
}

// splitSuite splits each position of a suite at split ply into one plan
// whose roots are the suite's positions (RootMoves their FENs): a split
// position's multiplicities all count for its suite position. The unique
// positions of all of them together are bounded by lim.MaxPositions.
func splitSuite(ctx context.Context, suite []engine.Position, depth, split int, lim perftsplit.Limits) (*perftsplit.Plan, error) {
	plan := &perftsplit.Plan{Depth: depth, SplitPly: split, Remaining: depth - split, RootMoves: make([]string, len(suite))}
	for k := range suite {
		plan.RootMoves[k] = suite[k].FEN()
		one := lim
		if lim.MaxPositions > 0 {
			if one.MaxPositions = lim.MaxPositions - len(plan.Positions); one.MaxPositions <= 0 {
				return nil, fmt.Errorf("%w: more than %d positions at ply %d over the suite's first %d positions",
					perftsplit.ErrTooManyPositions, lim.MaxPositions, split, k)
			}
		}
		p, err := perftsplit.SplitLimited(ctx, suite[k], depth, split, one)
		if err != nil {
			if errors.Is(err, perftsplit.ErrTooManyPositions) {
				return nil, fmt.Errorf("%w: more than %d positions at ply %d over the suite's first %d positions",
					perftsplit.ErrTooManyPositions, lim.MaxPositions, split, k+1)
			}
			return nil, err
		}
		plan.Leaves += p.Leaves
		for _, sp := range p.Positions {
			var n uint64
			for _, m := range sp.Mult {
				n += m.N
			}
			plan.Positions = append(plan.Positions, perftsplit.Position{FEN: sp.FEN, Est: sp.Est,
				Mult: []perftsplit.RootMult{{Root: k, N: n}}})
		}
	}
	return plan, nil
}
