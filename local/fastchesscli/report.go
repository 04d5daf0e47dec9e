package fastchesscli

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/sprt"
)

// This file prints fastchess's head-to-head report block, each line as
// the fastchess named in compat.go prints it on the same games:
//
//	--------------------------------------------------
//	Results of A vs B (100 nodes, 1t, 16MB, book.epd):
//	Elo: -34.86 +/- 68.19, nElo: -57.35 +/- 110.77
//	LOS: 15.78 %, DrawRatio: 33.33 %, PairsRatio: 0.50
//	Games: 12, Wins: 3, Losses: 5, Draws: 4, Points: 5.0 (41.67 %)
//	Ptnml(0-2): [1, 2, 2, 1, 0], WL/DD Ratio: 1.00
//	--------------------------------------------------
//
// The figures are fastchess's formulas (elo_pentanomial.cpp, elo_wdl.cpp,
// stats.hpp) in the same order of operations, so that they round alike,
// and a figure that is not a number prints as fastchess's does: "nan" or
// "-nan" by the sign bit, which an undefined operation (0/0) sets on the
// processors fastchess runs on. These are not Fishtest's figures (the
// sprt package's): Fishtest's parser reads only the Games and Ptnml lines,
// and a farm's logs compare with fastchess's.

// fastchessStats are the counts fastchess's report reads: the first
// engine's games and game pairs against the second. WL and DD are apart
// because the WL/DD ratio divides them.
type fastchessStats struct {
	wins, losses, draws    int64
	ll, ld, wl, dd, wd, ww int64
}

// statsOf is res as fastchess counts it. With a pentanomial every game is
// in a complete pair, so the pairs that won one game and lost the other
// are the wins not in a WD or WW pair.
func statsOf(res sprt.Results) fastchessStats {
	s := fastchessStats{wins: res.Wins, losses: res.Losses, draws: res.Draws}
	if p := res.Pentanomial; p != nil {
		s.ll, s.ld, s.wd, s.ww = p[0], p[1], p[3], p[4]
		s.wl = res.Wins - p[3] - 2*p[4]
		s.dd = p[2] - s.wl
	}
	return s
}

func (s fastchessStats) games() int64 { return s.wins + s.losses + s.draws }
func (s fastchessStats) pairs() int64 { return s.ww + s.wd + s.wl + s.dd + s.ld + s.ll }
func (s fastchessStats) points() float64 {
	return float64(s.wins) + 0.5*float64(s.draws)
}

// fastchessElo is fastchess's EloBase: the score, its variance per game
// or per pair, the Elo and nElo with their 95% half-widths.
type fastchessElo struct {
	score, variancePer  float64
	diff, err           float64
	neloDiff, neloError float64
}

const ci95ZScore = 1.959963984540054

func scoreToEloDiff(score float64) float64 { return -400.0 * math.Log10(1.0/score-1.0) }

// pentanomialElo is fastchess's EloPentanomial.
func pentanomialElo(s fastchessStats) fastchessElo {
	pairs := float64(s.pairs())
	ww, wd, wl := float64(s.ww)/pairs, float64(s.wd)/pairs, float64(s.wl)/pairs
	dd, ld, ll := float64(s.dd)/pairs, float64(s.ld)/pairs, float64(s.ll)/pairs
	score := ww + 0.75*wd + 0.5*(wl+dd) + 0.25*ld
	variance := ww*math.Pow(1-score, 2) + wd*math.Pow(0.75-score, 2) + (wl+dd)*math.Pow(0.5-score, 2) +
		ld*math.Pow(0.25-score, 2) + ll*math.Pow(0-score, 2)
	nelo := func(score float64) float64 { return (score - 0.5) / math.Sqrt(2*variance) * (800 / math.Ln10) }
	return eloFrom(score, variance, variance/pairs, nelo)
}

// wdlElo is fastchess's EloWDL (-report penta=false).
func wdlElo(s fastchessStats) fastchessElo {
	games := float64(s.games())
	w, d, l := float64(s.wins)/games, float64(s.draws)/games, float64(s.losses)/games
	score := w + 0.5*d
	variance := w*math.Pow(1-score, 2) + d*math.Pow(0.5-score, 2) + l*math.Pow(0-score, 2)
	nelo := func(score float64) float64 { return (score - 0.5) / math.Sqrt(variance) * (800 / math.Ln10) }
	return eloFrom(score, variance, variance/games, nelo)
}

func eloFrom(score, variance, variancePer float64, nelo func(float64) float64) fastchessElo {
	upper := score + ci95ZScore*math.Sqrt(variancePer)
	lower := score - ci95ZScore*math.Sqrt(variancePer)
	return fastchessElo{
		score: score, variancePer: variancePer,
		diff: scoreToEloDiff(score), err: (scoreToEloDiff(upper) - scoreToEloDiff(lower)) / 2.0,
		neloDiff: nelo(score), neloError: (nelo(upper) - nelo(lower)) / 2.0,
	}
}

// los is fastchess's likelihood of superiority, a fraction.
func (e fastchessElo) los() float64 {
	return (1 - cErf(-(e.score-0.5)/math.Sqrt(2.0*e.variancePer))) / 2.0
}

// cErf is C's erf: Go's math.Erf answers every NaN with a positive one,
// C's keeps the argument's (and so its sign, which the report prints).
func cErf(x float64) float64 {
	if math.IsNaN(x) {
		return x
	}
	return math.Erf(x)
}

// cFixed is C's "%.*f" (and fmt's "{:.Nf}"): "nan" and "-nan" by the
// sign bit, "inf", "-inf", and -0.00 kept.
func cFixed(x float64, decimals int) string {
	if math.IsNaN(x) {
		if math.Signbit(x) {
			return "-nan"
		}
		return "nan"
	}
	// Go prints infinities as "+Inf" and "-Inf".
	return strings.ToLower(strings.TrimPrefix(fmt.Sprintf("%.*f", decimals, x), "+"))
}

// fastchessBlock is the report between its two rules: header is the
// "Results of A vs B (...)" line without its colon, penta says whether
// the pentanomial lines are printed (-report penta=true), llr is the LLR
// line ("" without -sprt).
func fastchessBlock(header string, s fastchessStats, penta bool, llr string) string {
	var e fastchessElo
	drawRatio := 100.0 * float64(s.draws) / float64(s.games())
	if penta {
		e = pentanomialElo(s)
		drawRatio = float64(s.wl+s.dd) / float64(s.pairs()) * 100.0
	} else {
		e = wdlElo(s)
	}
	var b strings.Builder
	b.WriteString(reportRule + "\n")
	fmt.Fprintf(&b, "%s:\n", header)
	fmt.Fprintf(&b, "Elo: %s +/- %s, nElo: %s +/- %s\n", cFixed(e.diff, 2), cFixed(e.err, 2), cFixed(e.neloDiff, 2), cFixed(e.neloError, 2))
	fmt.Fprintf(&b, "LOS: %s %%, DrawRatio: %s %%", cFixed(e.los()*100.0, 2), cFixed(drawRatio, 2))
	if penta {
		pairsRatio := float64(s.ww+s.wd) / float64(s.ld+s.ll)
		fmt.Fprintf(&b, ", PairsRatio: %s", cFixed(pairsRatio, 2))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Games: %d, Wins: %d, Losses: %d, Draws: %d, Points: %s (%s %%)\n",
		s.games(), s.wins, s.losses, s.draws, cFixed(s.points(), 1), cFixed(s.points()/float64(s.games())*100, 2))
	if penta {
		fmt.Fprintf(&b, "Ptnml(0-2): [%d, %d, %d, %d, %d], WL/DD Ratio: %s\n",
			s.ll, s.ld, s.wl+s.dd, s.wd, s.ww, cFixed(float64(s.wl)/float64(s.dd), 2))
	}
	b.WriteString(llr)
	b.WriteString(reportRule + "\n")
	return b.String()
}

const reportRule = "--------------------------------------------------"

// llrLine is fastchess's LLR line: the LLR, the share of the bound it
// heads for, the bounds and the Elo hypotheses.
func llrLine(p *sprt.Params, res sprt.Results) string {
	if p == nil {
		return ""
	}
	lower, upper := p.Bounds()
	llr, err := sprt.LLR(*p, res)
	if err != nil {
		return fmt.Sprintf("LLR: n/a (%v)\n", err)
	}
	fraction := llr / upper
	if llr < 0 {
		fraction = -llr / lower
	}
	return fmt.Sprintf("LLR: %.2f (%.1f%%) (%.2f, %.2f) [%.2f, %.2f]\n", llr, fraction*100, lower, upper, p.Elo0, p.Elo1)
}

// fastchessBoard is fastchess's scoreboard for two engines: the games
// from the first engine's side, and with -report penta=true a pair's two
// games joined when the second ends. The report is printed from it as
// games end (fastchess's finish callback), so that each block comes right
// after the "Finished game" line that completed it, before the next
// game's "Started" line.
type fastchessBoard struct {
	penta bool
	// interval is -ratinginterval (0: at the end only); total is the
	// games scheduled (-1: no end).
	interval, total int
	// finished counts the games ended (fastchess's match_count_).
	finished int
	stats    fastchessStats
	// firstOfPair holds a pair's first game until its second ends, by
	// pair (game index / 2).
	firstOfPair map[int]fastchessStats
	// verdict is "H0" or "H1" once fastchess's SPRT reached a bound.
	verdict string
}

// seed starts the board from a resumed match's counted games.
func (b *fastchessBoard) seed(res sprt.Results, games int) {
	b.stats, b.finished = statsOf(res), games
}

// gameStats is one game from the first engine's side.
func gameStats(firstWon, firstLost bool) fastchessStats {
	switch {
	case firstWon:
		return fastchessStats{wins: 1}
	case firstLost:
		return fastchessStats{losses: 1}
	}
	return fastchessStats{draws: 1}
}

// add counts game index and says whether fastchess prints the report
// after it: when a pair completes whose number (from 1) is a multiple of
// the interval (a game's, without pairs), and after the last game.
func (b *fastchessBoard) add(index int, g fastchessStats) bool {
	due := false
	if b.penta {
		pair := index / 2
		first, ok := b.firstOfPair[pair]
		if !ok {
			b.firstOfPair[pair] = g
		} else {
			delete(b.firstOfPair, pair)
			b.stats.add(first, g)
			due = b.interval > 0 && (pair+1)%b.interval == 0
		}
	} else {
		b.stats.wins, b.stats.losses, b.stats.draws = b.stats.wins+g.wins, b.stats.losses+g.losses, b.stats.draws+g.draws
		due = b.interval > 0 && (b.finished+1)%b.interval == 0
	}
	last := b.finished+1 == b.total
	b.finished++
	return due || last
}

// add joins a pair's two games into s: their W/L/D and the pair's
// pentanomial bucket.
func (s *fastchessStats) add(first, second fastchessStats) {
	w, l, d := first.wins+second.wins, first.losses+second.losses, first.draws+second.draws
	s.wins, s.losses, s.draws = s.wins+w, s.losses+l, s.draws+d
	switch {
	case w == 2:
		s.ww++
	case w == 1 && d == 1:
		s.wd++
	case w == 1 && l == 1:
		s.wl++
	case d == 2:
		s.dd++
	case l == 1 && d == 1:
		s.ld++
	case l == 2:
		s.ll++
	}
}

// results are the board's counts as the report and the SPRT take them.
func (b *fastchessBoard) results() sprt.Results {
	s := b.stats
	res := sprt.Results{Wins: s.wins, Losses: s.losses, Draws: s.draws}
	if b.penta {
		res.Pentanomial = &sprt.Pentanomial{s.ll, s.ld, s.wl + s.dd, s.wd, s.ww}
	}
	return res
}

// pgnCRC is fastchess's -crc32 pgn=true: after each game is written to
// the PGN file, "File NAME has CRC32: 0x..." with the file's CRC32 so
// far (NAME as given; Fishtest's worker keeps the last such line and
// sends it with the file). The PGN file here is written a game pair at a
// time, so the running CRC32 is computed from each game's PGN text as it
// ends; the last line printed is checked against the file at the end
// (finish).
type pgnCRC struct {
	name string
	opts match.PGNOptions
	sum  uint32
	// printed is the last value printed; any says one was.
	printed uint32
	any     bool
}

// newPGNCRC starts from the file's present content (empty unless
// appended to or resumed), as fastchess does.
func newPGNCRC(name, path string, opts match.PGNOptions) *pgnCRC {
	c := &pgnCRC{name: name, opts: opts}
	if sum, err := fileCRC32(path); err == nil {
		c.sum = sum
	}
	return c
}

func (c *pgnCRC) game(out io.Writer, g *match.GameRecord) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if match.WritePGN(w, g, c.opts) != nil || w.Flush() != nil {
		return
	}
	c.sum = crc32.Update(c.sum, crc32.IEEETable, b.Bytes())
	c.line(out, c.sum)
}

func (c *pgnCRC) line(out io.Writer, sum uint32) {
	fmt.Fprintf(out, "File %s has CRC32: %#x\n", c.name, sum)
	c.printed, c.any = sum, true
}

// finish prints the file's CRC32 when the last line printed is not it:
// with games played at once, a pair can end after a game of another pair
// that is written after it. The last line is always the file's.
func (c *pgnCRC) finish(out io.Writer, path string) {
	sum, err := fileCRC32(path)
	if err != nil || (c.any && sum == c.printed) {
		return
	}
	c.line(out, sum)
}
