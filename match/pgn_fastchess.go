package match

import (
	"bufio"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/eco"
)

// The fastchess form of a game (PGNOptions.Fastchess): what fastchess
// 1.8.2 (f618e345) writes with -pgnout (its app/src/game/pgn/pgn_builder.cpp
// and pgn_gen.hpp), byte for byte apart from the wall-clock values (Date,
// GameDuration, GameStartTime, GameEndTime and each move's time):
//
//	[Event "Fastchess Tournament"]   (the default event)
//	[Site "?"]
//	[Date "2026.12.05"]              (local time, the game's start)
//	[Round "3"]                      (the round, not round.game)
//	[White "A"] [Black "B"] [Result "1-0"]
//	[EngineWhiteName "..."] [EngineWhiteAuthor "..."] (and Black's: what the engines call themselves)
//	[SetUp "1"] [FEN "..."]          (unless the standard start)
//	[Variant "Chess960"]
//	[GameDuration "00:00:05"] [GameStartTime "2026-12-05T03:50:01 +0000"] [GameEndTime "..."]
//	[PlyCount "83"] [Termination "adjudication"]
//	[TimeControl "10+0.1"]           (or WhiteTimeControl and BlackTimeControl)
//	[ECO "C65"] [Opening "Ruy Lopez: Berlin Defense"] (the last named position of the game; not Chess960)
//
// A tag with an empty value is left out; values are not escaped. The
// movetext is "1. e4 {book} e5 {book} 2. Nf3 {+0.35/12 0.120s, n=4000}
// ...": a move with its number and comment is one word, words wrapped
// before 80 columns, the result last, then a blank line. A comment is
// "book" for an opening move, else SCORE/DEPTH SECONDS with tl=, n= and
// sd= as asked, and on the last move the game's end in fastchess's words
// (PGNOptions.Reason).

// fastchessStartFEN is the standard start as fastchess writes it.
const fastchessStartFEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

// EngineID is what an engine calls itself (UCI "id name" and "id
// author"); empty for players that do not say.
type EngineID struct{ Name, Author string }

// writeFastchessPGN writes g as fastchess 1.8.2 writes a game.
func writeFastchessPGN(w *bufio.Writer, g *GameRecord, o PGNOptions) error {
	pos, err := startOf(g)
	if err != nil {
		return err
	}
	for _, t := range fastchessTags(g, o, pos) {
		if t[1] == "" {
			continue
		}
		w.WriteString("[" + t[0] + ` "` + t[1] + "\"]\n")
	}
	w.WriteString("\n")

	reason := g.Reason
	if o.Reason != nil {
		reason = o.Reason(g)
	}
	col := 0
	word := func(s string) {
		if col > 0 && col+len(s)+1 > 80 {
			w.WriteByte('\n')
			col = 0
		}
		if col > 0 {
			w.WriteByte(' ')
			col++
		}
		w.WriteString(s)
		col += len(s)
	}
	if len(g.Moves) == 0 && g.End == EndIllegalMove {
		word("{" + reason + "}") // fastchess: a first move that is illegal is a comment alone
	}
	for i, m := range g.Moves {
		var b strings.Builder
		num := strconv.Itoa(pos.FullmoveNumber())
		if pos.SideToMove() == engine.White {
			b.WriteString(num + ". ")
		} else if i == 0 {
			b.WriteString(num + "... ")
		}
		b.WriteString(pos.SAN(m))
		b.WriteString(" {")
		b.WriteString(fastchessComment(g, i, o, reason))
		b.WriteString("}")
		word(b.String())
		pos.MakeMove(m)
	}
	word(g.Result.String())
	w.WriteString("\n\n")
	return nil
}

// startOf is g's start position.
func startOf(g *GameRecord) (engine.Position, error) {
	pos := engine.StartPosition()
	if g.StartFEN != "" {
		var err error
		if pos, err = engine.ParseFEN(g.StartFEN); err != nil {
			return pos, err
		}
	}
	if g.Chess960 {
		pos.SetChess960(true)
	}
	return pos, nil
}

// fastchessTags are the tag pairs in fastchess's order (empty values
// are left out by the caller).
func fastchessTags(g *GameRecord, o PGNOptions, startPos engine.Position) [][2]string {
	event := o.Event
	if event == "" {
		event = "Fastchess Tournament"
	}
	site := o.Site
	if site == "" {
		site = "?"
	}
	round, _, _ := strings.Cut(g.Round, ".")
	res := g.Result.String()
	start, end := g.Start, g.Finished
	switch {
	case end.IsZero():
		end = start
	case start.IsZero(): // a game an engine could not start
		start = end
	}
	tags := [][2]string{{"Event", event}, {"Site", site}, {"Date", start.Local().Format("2006.01.02")},
		{"Round", round}, {"White", g.White}, {"Black", g.Black}, {"Result", res},
		{"EngineWhiteName", g.EngineIDs[0].Name}, {"EngineWhiteAuthor", g.EngineIDs[0].Author},
		{"EngineBlackName", g.EngineIDs[1].Name}, {"EngineBlackAuthor", g.EngineIDs[1].Author}}
	fen := startPos.FEN()
	if fen != fastchessStartFEN || g.Chess960 {
		tags = append(tags, [2]string{"SetUp", "1"}, [2]string{"FEN", fen})
	}
	if g.Chess960 {
		tags = append(tags, [2]string{"Variant", "Chess960"})
	}
	plies := len(g.Moves)
	if g.End == EndIllegalMove && strings.Contains(g.Reason, "illegal move: ") {
		plies++ // fastchess counts the illegal move it was sent
	}
	tags = append(tags, [2]string{"GameDuration", fastchessDuration(end.Sub(start))},
		[2]string{"GameStartTime", fastchessTime(start)}, [2]string{"GameEndTime", fastchessTime(end)},
		[2]string{"PlyCount", strconv.Itoa(plies)}, [2]string{"Termination", fastchessTermination(g.End)})
	wtc, btc := fastchessTC(g.Limits[0]), fastchessTC(g.Limits[1])
	if wtc == btc {
		tags = append(tags, [2]string{"TimeControl", wtc})
	} else {
		tags = append(tags, [2]string{"WhiteTimeControl", wtc}, [2]string{"BlackTimeControl", btc})
	}
	if op, ok := classify(g, startPos); ok {
		tags = append(tags, [2]string{"ECO", op.ECO}, [2]string{"Opening", op.Name})
	}
	return tags
}

// classify is the last position of the game (its start included) that
// fastchess's opening table names; Chess960 games are not named.
func classify(g *GameRecord, pos engine.Position) (eco.Opening, bool) {
	if g.Chess960 {
		return eco.Opening{}, false
	}
	op, ok := eco.Lookup(pos.IdentityFEN())
	for _, m := range g.Moves {
		pos.MakeMove(m)
		if o, found := eco.Lookup(pos.IdentityFEN()); found {
			op, ok = o, true
		}
	}
	return op, ok
}

// fastchessComment is the comment of move i: "book", or
// SCORE/DEPTH SECONDS, the extras asked for, and the game's end on the
// last move, joined by ", ".
func fastchessComment(g *GameRecord, i int, o PGNOptions, reason string) string {
	if i < g.BookPlies {
		return "book"
	}
	inf := g.Info[i]
	var b strings.Builder
	if inf.HasScore {
		b.WriteString(fastchessScore(inf.Score))
	}
	b.WriteString("/" + strconv.Itoa(inf.Depth) + " " + fastchessSeconds(inf.Elapsed))
	if o.TimeLeft {
		b.WriteString(", tl=" + fastchessSeconds(inf.TimeLeft))
	}
	if o.Nodes {
		b.WriteString(", n=" + strconv.FormatInt(inf.Nodes, 10))
	}
	if o.SelDepth {
		b.WriteString(", sd=" + strconv.Itoa(inf.SelDepth))
	}
	if i == len(g.Moves)-1 && reason != "" {
		b.WriteString(", " + reason)
	}
	return b.String()
}

// fastchessScore is a score as fastchess writes it: "+0.35", "-1.20",
// "0.00"; a mate in plies, "+M5" (mate in 3), "-M4" (mated in 2).
func fastchessScore(s Score) string {
	switch {
	case s.Mate > 0:
		return "+M" + strconv.Itoa(2*s.Mate-1)
	case s.Mate < 0:
		return "-M" + strconv.Itoa(-2*s.Mate)
	}
	v := s.CP
	sign := ""
	if v > 0 {
		sign = "+"
	} else if v < 0 {
		sign, v = "-", -v
	}
	return sign + strconv.FormatFloat(float64(v)/100, 'f', 2, 64)
}

// fastchessSeconds is a time in whole milliseconds as seconds with three
// decimals and an s: "0.120s".
func fastchessSeconds(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Milliseconds())/1000, 'f', 3, 64) + "s"
}

// fastchessDuration is HH:MM:SS of whole seconds.
func fastchessDuration(d time.Duration) string {
	s := int64(d / time.Second)
	return pad2(s/3600) + ":" + pad2(s/60%60) + ":" + pad2(s%60)
}

func pad2(v int64) string {
	if v < 10 {
		return "0" + strconv.FormatInt(v, 10)
	}
	return strconv.FormatInt(v, 10)
}

// fastchessTime is a local time as fastchess's GameStartTime:
// "2026-12-05T03:50:01 +0000".
func fastchessTime(t time.Time) string {
	return t.Local().Format("2006-01-02T15:04:05 -0700")
}

// fastchessTermination is the Termination tag fastchess writes for an end.
func fastchessTermination(e End) string {
	switch e {
	case EndAdjudication:
		return TermAdjudication
	case EndTimeForfeit:
		return TermTimeForfeit
	case EndIllegalMove:
		return "illegal move"
	case EndCrash, EndStall, EndAbandoned:
		return TermAbandoned
	case EndNone:
		return TermUnterminated
	}
	return TermNormal
}

// fastchessTC is a time control as fastchess prints one: "10+0.1",
// "40/60", "0.5/move", "-" without a clock (nodes and depth are not
// part of it). Seconds are C++'s default stream form (six significant
// digits), the move time eight.
func fastchessTC(l Limits) string {
	if l.MoveTime > 0 {
		return strconv.FormatFloat(l.MoveTime.Seconds(), 'g', 8, 64) + "/move"
	}
	if l.Base == 0 && l.Inc == 0 && l.MovesToGo == 0 {
		return "-"
	}
	s := ""
	if l.MovesToGo > 0 {
		s = strconv.Itoa(l.MovesToGo) + "/"
	}
	if l.Base+l.Inc > 0 {
		s += strconv.FormatFloat(l.Base.Seconds(), 'g', 6, 64)
	}
	if l.Inc > 0 {
		s += "+" + strconv.FormatFloat(l.Inc.Seconds(), 'g', 6, 64)
	}
	return s
}
