package coordinator

import (
	"strings"

	"github.com/arbiter-chess/arbiter/match"
)

// GameLabels maps a game's end to the labels of arbiter_games_total: result
// (GameWhite, GameBlack, GameDraw, GameNone) and termination (the Term*
// values of METRICS.md). It takes what a PGN carries, so it works on a
// match.GameRecord (GameRecordLabels) and on a reported PGN alike: the
// result token ("1-0", "0-1", "1/2-1/2", "*"), the Termination tag
// (match.Term*) and the reason text (the PGN's final comment).
func GameLabels(resultToken, termination, reason string) (result, term string) {
	switch resultToken {
	case "1-0":
		result = GameWhite
	case "0-1":
		result = GameBlack
	case "1/2-1/2":
		result = GameDraw
	default:
		result = GameNone
	}
	r := strings.ToLower(reason)
	switch termination {
	case match.TermNormal:
		switch {
		case strings.Contains(r, "mates"):
			term = TermCheckmate
		case strings.Contains(r, "stalemate"):
			term = TermStalemate
		case strings.Contains(r, "repetition"):
			term = TermRepetition
		case strings.Contains(r, "fifty"):
			term = TermFiftyMoves
		case strings.Contains(r, "insufficient"):
			term = TermInsufficientMaterial
		case strings.Contains(r, "resign"):
			term = TermResign
		default:
			term = TermAbandoned
		}
	case match.TermTimeForfeit:
		term = TermTimeForfeit
	case match.TermAdjudication:
		term = TermAdjudication
	case match.TermRulesInfract:
		term = TermIllegalMove
	case match.TermStalledConnect:
		term = TermStalled
	case match.TermAbandoned:
		switch {
		case strings.Contains(r, "crashed"), strings.Contains(r, "could not start"):
			term = TermCrash
		default:
			term = TermAbandoned
		}
	default: // match.TermUnterminated and anything unknown
		term = TermAbandoned
	}
	return result, term
}

// GameRecordLabels is GameLabels of a finished game record.
func GameRecordLabels(g *match.GameRecord) (result, term string) {
	return GameLabels(g.Result.String(), g.Termination, g.Reason)
}
