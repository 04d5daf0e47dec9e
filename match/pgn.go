package match

import (
	"bufio"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// PGNOptions fill the tags a game record does not know.
type PGNOptions struct {
	Event string // default "Arbiter match"
	Site  string // default "?"
	// Params are, by engine name, the tuned parameters the engine played
	// with (ParamsTag): written as the WhiteParams and BlackParams tags of
	// its games. A tune's sides play θ + c_k·Δ and θ − c_k·Δ, which the
	// game record alone does not show. Nil writes neither tag.
	Params map[string]string
	// TimeLeft, Nodes and SelDepth add ", tl=SECONDSs", ", n=NODES" and
	// ", sd=SELDEPTH" to each engine move's comment, as fastchess's
	// -pgnout timeleft=true nodes=true seldepth=true do.
	TimeLeft, Nodes, SelDepth bool
	// Fastchess writes the game as fastchess 1.8.2 does (pgn_fastchess.go):
	// its tags, their order, its move comments and line breaks. The
	// fastchess command line (local/fastchesscli) sets it; every other
	// writer keeps the form above.
	Fastchess bool
	// Reason, with Fastchess, is the game's end in fastchess's words, which
	// the last move's comment carries (nil: GameRecord.Reason).
	Reason func(*GameRecord) string
}

// ParamsTag is the value of a Params tag: the options of e named in
// names, in that order, as "Name=V,Name=V" (matched in any letter case,
// as UCI names are; a name e does not set is left out).
func ParamsTag(e EngineConfig, names []string) string {
	var b strings.Builder
	for _, n := range names {
		for _, o := range e.Options {
			if strings.EqualFold(o.Name, n) {
				if b.Len() > 0 {
					b.WriteByte(',')
				}
				b.WriteString(o.Name + "=" + o.Value)
				break
			}
		}
	}
	return b.String()
}

// ParamsOf is PGNOptions.Params for the engines of a game pair: each
// one's ParamsTag of names (nil without names).
func ParamsOf(engines [2]EngineConfig, names []string) map[string]string {
	if len(names) == 0 {
		return nil
	}
	return map[string]string{engines[0].Name: ParamsTag(engines[0], names), engines[1].Name: ParamsTag(engines[1], names)}
}

// WritePGN writes g in PGN export format (seven-tag roster first, movetext
// wrapped under 80 columns, one blank line after the game). Opening moves
// carry the comment {book}; engine moves {score/depth time}, e.g.
// {+0.31/12 0.52s}.
func WritePGN(w *bufio.Writer, g *GameRecord, o PGNOptions) error {
	if o.Fastchess {
		return writeFastchessPGN(w, g, o)
	}
	if o.Event == "" {
		o.Event = "Arbiter match"
	}
	if o.Site == "" {
		o.Site = "?"
	}
	round := g.Round
	if round == "" {
		round = "?"
	}
	writePGNTags(w, g, o, round)

	var pos engine.Position
	if g.StartFEN == "" {
		pos = engine.StartPosition()
	} else {
		var err error
		if pos, err = engine.ParseFEN(g.StartFEN); err != nil {
			return err
		}
	}
	if g.Chess960 {
		pos.SetChess960(true)
	}
	lw := lineWriter{w: w}
	num := pos.FullmoveNumber()
	var buf []byte
	for i, m := range g.Moves {
		buf = buf[:0]
		white := pos.SideToMove() == engine.White
		if white {
			buf = strconv.AppendInt(buf, int64(num), 10)
			buf = append(buf, '.')
		} else if i == 0 {
			buf = strconv.AppendInt(buf, int64(num), 10)
			buf = append(buf, "..."...)
		}
		if len(buf) > 0 {
			lw.word(buf)
			buf = buf[:0]
		}
		lw.word(append(buf, pos.SAN(m)...))
		buf = buf[:0]
		if i < g.BookPlies {
			lw.word([]byte("{book}"))
		} else {
			lw.comment(appendMoveComment(buf, g.Info[i], o))
		}
		pos.MakeMove(m)
		if !white {
			num++
		}
	}
	if g.Reason != "" {
		lw.comment([]byte("{" + strings.ReplaceAll(g.Reason, "}", ")") + "}"))
	}
	lw.word([]byte(g.Result.String()))
	w.WriteString("\n\n")
	return nil
}

// writePGNTags writes the tag pairs of g's PGN and the blank line after
// them.
func writePGNTags(w *bufio.Writer, g *GameRecord, o PGNOptions, round string) {
	tag := func(k, v string) {
		w.WriteString("[")
		w.WriteString(k)
		w.WriteString(` "`)
		w.WriteString(pgnEscape(v))
		w.WriteString("\"]\n")
	}
	tag("Event", o.Event)
	tag("Site", o.Site)
	tag("Date", g.Start.Format("2006.01.02"))
	tag("Round", round)
	tag("White", g.White)
	tag("Black", g.Black)
	tag("Result", g.Result.String())
	if g.StartFEN != "" {
		tag("SetUp", "1")
		tag("FEN", g.StartFEN)
	}
	if g.Chess960 {
		tag("Variant", "Chess960")
	}
	if g.Limits[0] == g.Limits[1] {
		tag("TimeControl", g.Limits[0].PGNTimeControl())
	} else {
		tag("WhiteTimeControl", g.Limits[0].String())
		tag("BlackTimeControl", g.Limits[1].String())
	}
	tag("Time", g.Start.Format("15:04:05"))
	tag("PlyCount", strconv.Itoa(len(g.Moves)))
	term := g.Termination
	if term == "" {
		term = TermUnterminated
	}
	tag("Termination", term)
	if v, ok := o.Params[g.White]; ok {
		tag("WhiteParams", v)
	}
	if v, ok := o.Params[g.Black]; ok {
		tag("BlackParams", v)
	}
	w.WriteString("\n")
}

// appendMoveComment appends the comment of a move out of book to b:
// {score/depth time s, tl=..., n=..., sd=...} as o asks.
func appendMoveComment(b []byte, inf MoveInfo, o PGNOptions) []byte {
	b = append(b, '{')
	if inf.HasScore {
		b = append(b, inf.Score.String()...)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(inf.Depth), 10)
		b = append(b, ' ')
	}
	b = appendSeconds(b, inf.Elapsed)
	b = append(b, 's')
	if o.TimeLeft {
		b = append(b, ", tl="...)
		b = appendSeconds(b, inf.TimeLeft)
		b = append(b, 's')
	}
	if o.Nodes {
		b = append(b, ", n="...)
		b = strconv.AppendInt(b, inf.Nodes, 10)
	}
	if o.SelDepth {
		b = append(b, ", sd="...)
		b = strconv.AppendInt(b, int64(inf.SelDepth), 10)
	}
	return append(b, '}')
}

func appendSeconds(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, d.Seconds(), 'f', 3, 64)
}

func pgnEscape(s string) string {
	if !strings.ContainsAny(s, `"\`) {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// lineWriter wraps movetext at 79 columns.
type lineWriter struct {
	w   *bufio.Writer
	col int
}

func (l *lineWriter) word(b []byte) {
	if l.col > 0 && l.col+1+len(b) > 79 {
		l.w.WriteByte('\n')
		l.col = 0
	} else if l.col > 0 {
		l.w.WriteByte(' ')
		l.col++
	}
	l.w.Write(b)
	l.col += len(b)
}

// comment writes a brace comment, breaking it at its spaces if it would not fit.
func (l *lineWriter) comment(b []byte) {
	if l.col+1+len(b) <= 79 || len(b) > 79 {
		l.word(b)
		return
	}
	for _, part := range strings.Fields(string(b)) {
		l.word([]byte(part))
	}
}
