package matchspec

import (
	"testing"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/wire/gamelabel"
)

// Every way a game ends reaches the coordinator as the label METRICS.md
// gives it, through the wire's enums alone.
func TestOutcomeLabels(t *testing.T) {
	for _, c := range []struct {
		res          match.Result
		end          match.End
		result, term string
	}{
		{match.WhiteWins, match.EndCheckmate, gamelabel.White, gamelabel.Checkmate},
		{match.BlackWins, match.EndCheckmate, gamelabel.Black, gamelabel.Checkmate},
		{match.Draw, match.EndStalemate, gamelabel.Draw, gamelabel.Stalemate},
		{match.Draw, match.EndRepetition, gamelabel.Draw, gamelabel.Repetition},
		{match.Draw, match.EndFiftyMoves, gamelabel.Draw, gamelabel.FiftyMoves},
		{match.Draw, match.EndInsufficientMaterial, gamelabel.Draw, gamelabel.InsufficientMaterial},
		{match.BlackWins, match.EndResign, gamelabel.Black, gamelabel.Resign},
		{match.Draw, match.EndAdjudication, gamelabel.Draw, gamelabel.Adjudication},
		{match.WhiteWins, match.EndTimeForfeit, gamelabel.White, gamelabel.TimeForfeit},
		{match.Draw, match.EndTimeForfeit, gamelabel.Draw, gamelabel.TimeForfeit},
		{match.WhiteWins, match.EndIllegalMove, gamelabel.White, gamelabel.IllegalMove},
		{match.BlackWins, match.EndCrash, gamelabel.Black, gamelabel.Crash},
		{match.BlackWins, match.EndStall, gamelabel.Black, gamelabel.Stalled},
		{match.NoResult, match.EndAbandoned, gamelabel.None, gamelabel.Abandoned},
		{match.WhiteWins, match.EndAbandoned, gamelabel.White, gamelabel.Abandoned},
	} {
		o := OutcomeToProto(3, &match.GameRecord{Result: c.res, End: c.end, Reason: "why"})
		r, term := gamelabel.Labels(o)
		if r != c.result || term != c.term || o.GetGameIndex() != 3 || o.GetReason() != "why" {
			t.Errorf("%v/%v: labels %s/%s (%v), want %s/%s", c.res, c.end, r, term, o, c.result, c.term)
		}
		ok := false
		for _, want := range gamelabel.Series()[term] {
			ok = ok || want == r
		}
		if !ok {
			t.Errorf("%s/%s is not an initialised series", r, term)
		}
	}
	for e := match.EndNone + 1; e <= match.EndAbandoned; e++ {
		if EndToProto(e) == 0 {
			t.Errorf("%v has no wire value", e)
		}
	}
}
