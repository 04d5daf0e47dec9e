package test

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// What `arbiter status` shows of tests (SPRT tests and fixed-games
// matches): a row of the list, first of its tables (Order 10), the detail
// of one test, and the `detail` object of --json, with the typed `test`
// object (the same object, for clients of the release before) and its
// workers beside it for a release (jobreport.JobJSON.Test), and `status
// TEST --wait` (waitTest). The detail is jobreport.PrintTest, which stays
// in client/jobreport because submit sprt|match --wait and up print a
// finished test through it (jobreport.RunTestWith) from client/testflags,
// which the SPSA kind's confirmation test shares.
func init() {
	jobreport.RegisterReport(jobkind.FamilyTest, jobreport.Report{Order: 10, Header: "TEST\tSTATE\tENGINES\tTC\tGAMES\tELO\tLLR",
		Row: listRow, Detail: jobreport.PrintTest, Wait: waitTest,
		JSON: func(o *jobreport.JobJSON, j *arbiterv1.Job) {
			o.Test, _ = o.Detail.(*jobreport.TestJob)
			o.Workers = jobreport.NewWorkers(j.GetMatchProgress().GetWorkers())
		},
		DetailJSON:   func(j *arbiterv1.Job) any { return newTestJSON(j) },
		DetailSchema: detailSchema})
}

// waitTest is `status TEST --wait`: the test followed to its end as
// submit sprt|match --wait follows it, then printed (as JSON with
// --json); a test that ends other than done is exit status 1.
func waitTest(ctx context.Context, c *clusterclient.Client, j *arbiterv1.Job, o jobreport.WaitOptions) (*arbiterv1.Job, error) {
	final, err := jobreport.FollowTest(ctx, c, j.GetJobId(), o.Progress)
	if err != nil {
		return nil, err
	}
	if err := o.Print(final, jobreport.PrintTest); err != nil {
		return nil, err
	}
	return final, jobreport.FinishGames(ctx, c, o.Progress, final, "", "test")
}

// detailSchema is the schema of the job's detail object: the typed test
// object's, which the detail repeats.
//
//go:embed detail.schema.json
var detailSchema []byte

// listRow is a test's row of `arbiter status`'s list.
func listRow(j *arbiterv1.Job) string {
	s, mp := j.GetMatch(), j.GetMatchProgress()
	games := fmt.Sprintf("%d", mp.GetGames())
	if s.GetGames() > 0 {
		games += fmt.Sprintf("/%d", s.GetGames())
	}
	elo := "-"
	if mp.GetGames() > 0 {
		elo = fmt.Sprintf("%.1f ± %.1f", mp.GetElo(), (mp.GetEloCiHigh()-mp.GetEloCiLow())/2)
	}
	llr := "-"
	if j.GetKind() == jobkind.SPRT {
		llr = fmt.Sprintf("%.2f (%.2f, %.2f)", mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound())
		if st := mp.GetSprtState(); st != "" && st != "continue" {
			llr += " " + st
		}
		if mp.GetStoppedByHand() {
			llr += " stopped by hand"
		}
	}
	return fmt.Sprintf("%s\t%s\t%s vs %s\t%s\t%s\t%s\t%s", j.GetJobId(), jobreport.ListState(j), s.GetEngineA().GetName(), s.GetEngineB().GetName(),
		limits(s), games, elo, llr)
}

// limits describes a test's time controls (matchspec.DescribeLimits).
func limits(s *arbiterv1.MatchSpec) string {
	return matchspec.DescribeLimits(s.GetTimeControl(), s.GetEngineA(), s.GetEngineB())
}

// newTestJSON is a test's typed `test` object of --json (JobJSON.Test).
func newTestJSON(j *arbiterv1.Job) *jobreport.TestJob {
	s, mp := j.GetMatch(), j.GetMatchProgress()
	finite := jobreport.Finite
	o := &jobreport.TestJob{Engines: [2]jobreport.EngineJSON{jobreport.NewEngineJSON(s.GetEngineA()), jobreport.NewEngineJSON(s.GetEngineB())},
		TC: limits(s), Book: s.GetBookName(), Openings: s.GetOpeningsCount(), GamesMax: s.GetGames(), Games: mp.GetGames(),
		Wins: mp.GetWins(), Draws: mp.GetDraws(), Losses: mp.GetLosses(), Pentanomial: jobreport.Penta(mp.GetPentanomial()),
		Batches: mp.GetBatchesDone(), BatchPairs: mp.GetBatchPairs(), PGNs: mp.GetPgns(), StoppedByHand: mp.GetStoppedByHand(),
		Tags: s.GetTags(), Notes: s.GetNotes(), RescheduledFrom: s.GetRescheduledFrom(), RescheduledAs: mp.GetRescheduledAs()}
	if mp.GetGames() > 0 {
		o.Elo, o.EloCI95 = finite(mp.GetElo()), [2]*float64{finite(mp.GetEloCiLow()), finite(mp.GetEloCiHigh())}
		o.LOS, o.NElo, o.NEloHalf95 = finite(mp.GetLos()), finite(mp.GetNelo()), finite(mp.GetNeloHalfWidth())
	}
	if a := mp.GetAnytime(); a != nil {
		o.Anytime = &jobreport.AnytimeJSON{Level: a.GetLevel(), Elo: [2]*float64{finite(a.GetEloLow()), finite(a.GetEloHigh())},
			NElo: [2]*float64{finite(a.GetNeloLow()), finite(a.GetNeloHigh())}}
	}
	o.StopPrecision, o.StoppedByPrecision = s.GetStopPrecisionElo(), mp.GetStoppedByPrecision()
	if g := s.GetGroup(); g != "" {
		o.Group = &jobreport.GroupJSON{Name: g, Takes: s.GetGroupTakes(), TakeAlpha: s.GetSprt().GetAlpha() / float64(max(s.GetGroupTakes(), 1)),
			Members: []jobreport.GroupTakeJSON{}}
		for _, t := range mp.GetGroupTakes() {
			o.Group.Members = append(o.Group.Members, jobreport.GroupTakeJSON{JobID: t.GetJobId(), Kind: t.GetKind(), State: t.GetState(),
				SPRTState: t.GetSprtState(), Alpha: t.GetAlpha(), Games: t.GetGames()})
		}
	}
	if sp := s.GetSprt(); j.GetKind() == jobkind.SPRT {
		state := mp.GetSprtState()
		if state == "" {
			state = "continue"
		}
		o.SPRT = &jobreport.SPRTJSON{Elo0: sp.GetElo0(), Elo1: sp.GetElo1(), Alpha: sp.GetAlpha(), Beta: sp.GetBeta(), Model: sp.GetModel(),
			LLR: finite(mp.GetLlr()), LowerBound: mp.GetLowerBound(), UpperBound: mp.GetUpperBound(), State: state}
	}
	return o
}
