package test

// The result block of a test (`arbiter status JOB --block`, the API's
// /block, the page, the webhooks): OpenBench's or Fishtest's layout of its
// statistics, registered for the family test (resultblock.Register).

import (
	"fmt"
	"math"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"github.com/arbiter-chess/arbiter/wire/resultblock"
)

func init() { resultblock.Register(jobkind.FamilyTest, testBlock) }

// testBlock is a test's block in style; a test without games has
// "Pending..." in Fishtest's.
func testBlock(j *arbiterv1.Job, style resultblock.Style) []string {
	spec, mp := j.GetMatch(), j.GetMatchProgress()
	isSPRT := j.GetKind() == jobkind.SPRT
	p := mp.GetPentanomial()
	penta := [5]uint64{p.GetLl(), p.GetLd(), p.GetDd(), p.GetWd(), p.GetWw()}
	if style == resultblock.Fishtest {
		var lines []string
		if mp.GetGames() == 0 {
			return []string{"Pending..."}
		}
		if isSPRT {
			sp := spec.GetSprt()
			lines = append(lines, fmt.Sprintf("LLR: %.2f (%.2f,%.2f) %s", mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound(),
				fishtestBounds(sp.GetModel(), sp.GetElo0(), sp.GetElo1())))
		} else {
			lines = append(lines, fmt.Sprintf("ELO: %.2f +-%.1f (95%%) LOS: %.1f%%", mp.GetElo(), eloError(mp), 100*mp.GetLos()))
		}
		lines = append(lines, fmt.Sprintf("Total: %d W: %d L: %d D: %d", mp.GetGames(), mp.GetWins(), mp.GetLosses(), mp.GetDraws()))
		if p != nil {
			lines = append(lines, fmt.Sprintf("Ptnml(0-2): %d, %d, %d, %d, %d", penta[0], penta[1], penta[2], penta[3], penta[4]))
		}
		if a := earlyStopInterval(j); a != nil {
			lines = append(lines, fmt.Sprintf("Anytime-valid ELO (%.4g%%): [%.2f, %.2f] (%s)", 100*a.GetLevel(), a.GetEloLow(), a.GetEloHigh(), earlyStopWhy(j)))
		}
		return lines
	}
	kind := "Conf"
	if isSPRT {
		kind = "SPRT"
	}
	lines := []string{
		fmt.Sprintf("Elo   | %.2f +- %.2f (95%%)", mp.GetElo(), eloError(mp)),
		fmt.Sprintf("%-5s | %s %s", kind, resultblock.TimeControl(matchspec.EngineTimeControl(spec.GetTimeControl(), spec.GetEngineA())), resultblock.ThreadsHash(spec.GetEngineA())),
	}
	if isSPRT {
		sp := spec.GetSprt()
		lines = append(lines, fmt.Sprintf("LLR   | %.2f (%.2f, %.2f) [%.2f, %.2f]", mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound(), sp.GetElo0(), sp.GetElo1()))
	}
	lines = append(lines, fmt.Sprintf("Games | N: %d W: %d L: %d D: %d", mp.GetGames(), mp.GetWins(), mp.GetLosses(), mp.GetDraws()))
	if p != nil {
		lines = append(lines, fmt.Sprintf("Penta | [%d, %d, %d, %d, %d]", penta[0], penta[1], penta[2], penta[3], penta[4]))
	}
	if a := earlyStopInterval(j); a != nil {
		lines = append(lines, fmt.Sprintf("Any   | [%.2f, %.2f] (%.4g%% anytime-valid; %s)", a.GetEloLow(), a.GetEloHigh(), 100*a.GetLevel(), earlyStopWhy(j)))
	}
	return lines
}

// earlyStopInterval is the anytime-valid interval of a test that ended
// before its design said (stopped by hand, by a precision stop, or an SPRT
// capped without a decision), whose fixed-games interval does not hold;
// nil otherwise, so a block of a test that ran its course keeps the
// layout engine repositories expect.
func earlyStopInterval(j *arbiterv1.Job) *arbiterv1.AnytimeInterval {
	if earlyStopWhy(j) == "" {
		return nil
	}
	return j.GetMatchProgress().GetAnytime()
}

// earlyStopWhy says how a test ended early, "" if it did not.
func earlyStopWhy(j *arbiterv1.Job) string {
	mp := j.GetMatchProgress()
	switch {
	case mp.GetStoppedByHand():
		return "stopped by hand"
	case mp.GetStoppedByPrecision():
		return "precision stop"
	case j.GetKind() == jobkind.SPRT && j.GetState() == arbiterv1.JobState_JOB_STATE_DONE && mp.GetSprtState() == string(sprt.Continue):
		return "game cap reached"
	}
	return ""
}

// eloError is the half width of the 95% interval as OpenBench prints it:
// the larger side (the interval is not symmetric for lopsided results).
func eloError(mp *arbiterv1.MatchProgress) float64 {
	e := max(mp.GetEloCiHigh()-mp.GetElo(), mp.GetElo()-mp.GetEloCiLow())
	if math.IsNaN(e) || math.IsInf(e, 0) {
		return 0
	}
	return e
}

// fishtestBounds writes elo0 and elo1 in Fishtest's brackets, which name
// the model: <> normalized, {} logistic, [] BayesElo.
func fishtestBounds(model string, elo0, elo1 float64) string {
	open, closing := "{", "}"
	if m, err := sprt.ParseModel(model); err == nil {
		switch m {
		case sprt.Normalized:
			open, closing = "<", ">"
		case sprt.BayesElo:
			open, closing = "[", "]"
		}
	}
	return fmt.Sprintf("%s%.2f,%.2f%s", open, elo0, elo1, closing)
}
