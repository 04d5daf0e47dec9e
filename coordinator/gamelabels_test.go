package coordinator

import (
	"testing"

	"github.com/arbiter-chess/arbiter/match"
)

// TestGameLabels maps every way match/game.go ends a game onto the closed
// label set of arbiter_games_total, and checks every pair it can produce is
// one the metrics initialise (so no series appears from nowhere).
func TestGameLabels(t *testing.T) {
	cases := []struct {
		res, term, reason string
		wantRes, wantTerm string
	}{
		{"1-0", match.TermNormal, "White mates", GameWhite, TermCheckmate},
		{"0-1", match.TermNormal, "Black mates", GameBlack, TermCheckmate},
		{"1/2-1/2", match.TermNormal, "draw by stalemate", GameDraw, TermStalemate},
		{"1/2-1/2", match.TermNormal, "draw by insufficient mating material", GameDraw, TermInsufficientMaterial},
		{"1/2-1/2", match.TermNormal, "draw by fifty-move rule", GameDraw, TermFiftyMoves},
		{"1/2-1/2", match.TermNormal, "draw by threefold repetition", GameDraw, TermRepetition},
		{"0-1", match.TermNormal, "White resigns", GameBlack, TermResign},
		{"1-0", match.TermTimeForfeit, "Black loses on time", GameWhite, TermTimeForfeit},
		{"1/2-1/2", match.TermTimeForfeit, "White loses on time, Black cannot mate", GameDraw, TermTimeForfeit},
		{"1-0", match.TermTimeForfeit, "Black exceeds the move time", GameWhite, TermTimeForfeit},
		{"0-1", match.TermStalledConnect, "White's engine hangs", GameBlack, TermStalled},
		{"0-1", match.TermAbandoned, "White's engine crashed", GameBlack, TermCrash},
		{"1-0", match.TermAbandoned, "Black could not start the game", GameWhite, TermCrash},
		{"1-0", match.TermAbandoned, "Black's engine failed: protocol", GameWhite, TermAbandoned},
		{"*", match.TermAbandoned, `bad opening FEN "x": bad`, GameNone, TermAbandoned},
		{"1-0", match.TermRulesInfract, "Black makes an illegal move: e2e5", GameWhite, TermIllegalMove},
		{"0-1", match.TermRulesInfract, "White's engine sent no move", GameBlack, TermIllegalMove},
		{"0-1", match.TermAdjudication, "White resigns (adjudication)", GameBlack, TermAdjudication},
		{"1/2-1/2", match.TermAdjudication, "draw by adjudication", GameDraw, TermAdjudication},
		{"*", match.TermUnterminated, "match stopped", GameNone, TermAbandoned},
	}
	for _, c := range cases {
		r, term := GameLabels(c.res, c.term, c.reason)
		if r != c.wantRes || term != c.wantTerm {
			t.Errorf("GameLabels(%q, %q, %q) = %s, %s; want %s, %s", c.res, c.term, c.reason, r, term, c.wantRes, c.wantTerm)
		}
		ok := false
		for _, want := range gameSeries[term] {
			ok = ok || want == r
		}
		if !ok {
			t.Errorf("%s/%s is not an initialised arbiter_games_total series", r, term)
		}
	}
	g := &match.GameRecord{Result: match.Draw, Termination: match.TermNormal, Reason: "draw by stalemate"}
	if r, term := GameRecordLabels(g); r != GameDraw || term != TermStalemate {
		t.Errorf("GameRecordLabels = %s, %s", r, term)
	}
}
