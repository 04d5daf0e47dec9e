package fastchesscli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/sprt"
)

// reporter prints fastchess's lines (or cutechess-cli's, in the cutechess
// format) for a match: the farms that call a runner read them line by line,
// so each follows the other runner's format to the character where a
// parser looks:
//
//	Started game 1 of 4 (A vs B)
//	Finished game 1 (A vs B): 1-0 {White mates}
//	Score of A vs B: 1 - 0 - 0  [1.000] 1                (cutechess format)
//	--------------------------------------------------   (fastchess format)
//	Results of A vs B (10+0.1, 1t, 16MB, book.epd):
//	Elo: ..., nElo: ...
//	LOS: ..., DrawRatio: ..., PairsRatio: ...
//	Games: 2, Wins: 1, Losses: 0, Draws: 1, Points: 1.5 (75.00 %)
//	Ptnml(0-2): [0, 0, 1, 1, 0], WL/DD Ratio: 0.00
//	LLR: ...
//	--------------------------------------------------
//	Finished match
//
// Game numbers are the game's place in the schedule, from 1, so that
// games 2k-1 and 2k are a pair (OpenBench pairs them so).
type reporter struct {
	mu      sync.Mutex
	out     io.Writer
	inv     *Invocation
	total   int // games scheduled, -1 without end
	names   []string
	details string // "(10+0.1, 1t, 16MB, book.epd)"
	sprt    *sprt.Params
	// options: what each engine made of its options (the fastchess
	// dialect; nil otherwise).
	options *engineOptions

	// wins, draws, losses: the first engine's games against the second
	// as they finish (the cutechess format's "Score of" line).
	wins, draws, losses int
	finished            int
	// printed is the count (units or games) the last report was made at.
	printed int
	// board, in the fastchess format with two engines, counts the games
	// as fastchess's scoreboard does and prints the report as they end;
	// nil otherwise (the report follows the counted units).
	board *fastchessBoard
	// crc, with -crc32 pgn=true and a PGN file, prints the file's CRC32
	// after each game as fastchess does; nil otherwise.
	crc *pgnCRC
}

func (r *reporter) printf(format string, args ...any) {
	fmt.Fprintf(r.out, format, args...)
}

// started prints the game's Started line, then, as fastchess does when
// it sets the engines' options before the game, a warning line for every
// option White's engine and then Black's could not take; it returns the
// warnings.
func (r *reporter) started(index int, white, black string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.board != nil && r.board.verdict != "" {
		return nil // fastchess starts no game after its SPRT ended
	}
	total := "?"
	if r.total >= 0 {
		total = fmt.Sprint(r.total)
	}
	r.printf("Started game %d of %s (%s vs %s)\n", index+1, total, white, black)
	if r.options == nil {
		return nil
	}
	var warnings []string
	for _, name := range []string{white, black} {
		if i := slices.Index(r.names, name); i >= 0 {
			warnings = append(warnings, r.options.warnings(i, name)...)
		}
	}
	for _, w := range warnings {
		r.printf("%s\n", w)
	}
	return warnings
}

func (r *reporter) ended(index int, g *match.GameRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.board != nil && r.board.verdict != "" {
		return // a game cut short when the SPRT ended: fastchess prints nothing
	}
	if r.crc != nil {
		r.crc.game(r.out, g)
	}
	r.printf("Finished game %d (%s vs %s): %s {%s}\n", index+1, g.White, g.Black, g.Result, reason(g))
	r.finished++
	if len(r.names) != 2 {
		return
	}
	first := g.White == r.names[0]
	won, lost := false, false
	switch {
	case g.Result == match.Draw:
		r.draws++
	case (g.Result == match.WhiteWins) == first:
		r.wins++
		won = true
	default:
		r.losses++
		lost = true
	}
	if r.inv.Output == "cutechess" && r.finished%r.inv.ScoreInterval == 0 {
		r.score()
	}
	if r.board == nil {
		return
	}
	if r.board.add(index, gameStats(won, lost)) {
		r.block(r.names[0], r.names[1], r.board.stats, r.board.results())
	}
	if r.sprt != nil {
		r.sprtCheck()
	}
}

// sprtCheck is fastchess's SPRT after each game: the LLR of the board's
// counts against the bounds, without Fishtest's overshoot correction
// (the sprt package's Sequential); at a bound, the report again and the
// verdict, and the match stops (sprtDone).
func (r *reporter) sprtCheck() {
	res := r.board.results()
	llr, err := sprt.LLR(*r.sprt, res)
	if err != nil {
		return
	}
	lower, upper := r.sprt.Bounds()
	switch {
	case llr >= upper:
		r.board.verdict = "H1"
	case llr <= lower:
		r.board.verdict = "H0"
	default:
		return
	}
	r.block(r.names[0], r.names[1], r.board.stats, res)
	r.printf("SPRT ([%.2f, %.2f]) completed - %s was accepted\n", r.sprt.Elo0, r.sprt.Elo1, r.board.verdict)
}

// sprtDone says whether fastchess's SPRT has ended the match.
func (r *reporter) sprtDone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.board.verdict != ""
}

// score prints cutechess-cli's "Score of" line.
func (r *reporter) score() {
	n := r.wins + r.draws + r.losses
	s := 0.0
	if n > 0 {
		s = (float64(r.wins) + float64(r.draws)/2) / float64(n)
	}
	r.printf("Score of %s vs %s: %d - %d - %d  [%.3f] %d\n", r.names[0], r.names[1], r.wins, r.losses, r.draws, s, n)
}

// results are the first two engines' results as the report counts them:
// without -report penta=true, no pentanomial.
func (r *reporter) results(st *match.Standings) sprt.Results {
	res := st.Pairings[0].Results()
	if !r.inv.Penta {
		res.Pentanomial = nil
	}
	return res
}

// interval prints the report block.
func (r *reporter) interval(st *match.Standings) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(st.Engines) > 2 {
		r.printf("--------------------------------------------------\n%s--------------------------------------------------\n", st.Ratings())
		return
	}
	res := r.results(st)
	if res.Wins+res.Draws+res.Losses == 0 {
		return
	}
	if r.inv.Output == "cutechess" {
		fe := sprt.FixedGamesElo(sprt.Results{Wins: res.Wins, Draws: res.Draws, Losses: res.Losses})
		n := float64(res.Wins + res.Draws + res.Losses)
		r.printf("Elo difference: %s +/- %s, LOS: %s %%, DrawRatio: %.2f %%\n", cFixed(fe.Elo, 2), cFixed(fe.HalfWidth95, 2), cFixed(100*fe.LOS, 2), 100*float64(res.Draws)/n)
		if r.sprt != nil {
			lower, upper := r.sprt.Bounds()
			llr, err := sprt.LLR(*r.sprt, sprt.Results{Wins: res.Wins, Draws: res.Draws, Losses: res.Losses})
			if err == nil {
				pct := 100 * llr / upper
				if llr < 0 {
					pct = 100 * llr / lower
				}
				verdict := ""
				switch {
				case llr >= upper:
					verdict = " - H1 was accepted"
				case llr < lower:
					verdict = " - H0 was accepted"
				}
				r.printf("SPRT: llr %.2f (%.1f%%), lbound %.2f, ubound %.2f%s\n", llr, pct, lower, upper, verdict)
			}
		}
		return
	}
	r.block(st.Engines[0], st.Engines[1], statsOf(res), res)
}

// block prints fastchess's report block for the first two engines, with
// the pentanomial lines when res has one.
func (r *reporter) block(first, second string, s fastchessStats, res sprt.Results) {
	header := fmt.Sprintf("Results of %s vs %s (%s)", first, second, r.details)
	fmt.Fprint(r.out, fastchessBlock(header, s, res.Pentanomial != nil, llrLine(r.sprt, res)))
}

func (r *reporter) line(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.out, s)
}

// reason is a game's end in fastchess's words, which the farms' parsers
// search: "disconnects" and "stalls" count as crashes, "on time" as a time
// loss, "illegal" as an illegal move.
func reason(g *match.GameRecord) string {
	winner, loser := "Black", "White"
	if g.Result == match.WhiteWins {
		winner, loser = "White", "Black"
	}
	switch g.End {
	case match.EndCheckmate:
		return winner + " mates"
	case match.EndStalemate:
		return "Draw by stalemate"
	case match.EndRepetition:
		return "Draw by 3-fold repetition"
	case match.EndFiftyMoves:
		return "Draw by fifty moves rule"
	case match.EndInsufficientMaterial:
		return "Draw by insufficient mating material"
	case match.EndAdjudication:
		// fastchess names a tablebase adjudication (match.hpp's
		// ADJUDICATION_TB_*_MSG), and its scores' adjudication not.
		tb := strings.HasSuffix(g.Reason, "SyzygyTB")
		switch {
		case g.Result == match.Draw && tb:
			return match.TBDrawReason
		case g.Result == match.Draw:
			return "Draw by adjudication"
		case tb:
			return fmt.Sprintf(match.TBWinReasonFormat, winner)
		}
		return winner + " wins by adjudication"
	case match.EndResign:
		return loser + " resigns"
	case match.EndTimeForfeit:
		if g.Result == match.Draw {
			return g.Reason // "White loses on time, Black cannot mate"
		}
		return loser + " loses on time"
	case match.EndIllegalMove:
		return loser + " makes an illegal move"
	case match.EndCrash:
		return loser + " disconnects"
	case match.EndStall:
		return loser + "'s connection stalls"
	}
	return strings.ReplaceAll(g.Reason, "}", ")")
}

// details is the report header's parenthesis: time controls, threads,
// hash and book as fastchess shows them. Threads and Hash are the values
// the engines hold (their defaults unless set, NULL when they declare no
// such option) when opts knows them, else the values given.
func details(engines []match.EngineConfig, limits match.Limits, book string, opts *engineOptions) string {
	var tcs, threads, hashes []string
	for i, e := range engines[:2] {
		tcs = append(tcs, limitText(e.LimitsOr(limits)))
		if opts != nil {
			if t, h, ok := opts.header(i); ok {
				threads, hashes = append(threads, t), append(hashes, h)
				continue
			}
		}
		threads = append(threads, optionText(e, "Threads", "t"))
		hashes = append(hashes, optionText(e, "Hash", "MB"))
	}
	same := func(v []string) string {
		if v[0] == v[1] {
			return v[0]
		}
		return v[0] + " - " + v[1]
	}
	s := same(tcs) + ", " + same(threads) + ", " + same(hashes)
	if book != "" {
		s += ", " + book
	}
	return s
}

func optionText(e match.EngineConfig, name, unit string) string {
	for _, o := range e.Options {
		if strings.EqualFold(o.Name, name) {
			return o.Value + unit
		}
	}
	return "NULL"
}

func limitText(l match.Limits) string {
	switch {
	case l.Base > 0:
		s := ""
		if l.MovesToGo > 0 {
			s = fmt.Sprintf("%d/", l.MovesToGo)
		}
		s += fmt.Sprint(l.Base.Seconds())
		if l.Inc > 0 {
			s += fmt.Sprintf("+%.2g", l.Inc.Seconds())
		}
		return s
	case l.MoveTime > 0:
		return fmt.Sprintf("%v/move", l.MoveTime.Seconds())
	case l.Depth > 0:
		return fmt.Sprintf("%d plies", l.Depth)
	case l.Nodes > 0:
		return fmt.Sprintf("%d nodes", l.Nodes)
	}
	return ""
}
