package match

// Rule tests with scripted in-process players (the builtin-player hook):
// they play given moves with given scores, so that every way a game can end
// is reached exactly. Process drivers are tested in match_test.go.

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

type script struct {
	name  string
	moves []string
	score int
	delay time.Duration
	i     int
}

func (s *script) Name() string                        { return s.name }
func (s *script) NewGame(context.Context, bool) error { s.i = 0; return nil }
func (s *script) Quit() error                         { return nil }
func (s *script) Think(_ context.Context, _ *ThinkRequest) (Reply, error) {
	if s.i >= len(s.moves) {
		return Reply{}, ErrNoBestmove
	}
	m := s.moves[s.i]
	s.i++
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	return Reply{Move: m, Elapsed: s.delay, Info: Info{HasScore: true, Score: Score{CP: s.score}, Depth: 1}}, nil
}

func play(t *testing.T, fen string, w, b *script, lim Limits, cfg GameConfig) *GameRecord {
	t.Helper()
	g := PlayGame(context.Background(), w, b, lim, lim, Opening{FEN: fen}, cfg)
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	if err := WritePGN(bw, g, PGNOptions{}); err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	for _, px := range []string{"/usr/games/pgn-extract", "/usr/bin/pgn-extract"} {
		if _, err := os.Stat(px); err != nil {
			continue
		}
		f := t.TempDir() + "/g.pgn"
		os.WriteFile(f, buf.Bytes(), 0o644)
		if out, err := exec.Command(px, "-s", "-r", f).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("pgn-extract: %v %s\n%s", err, out, buf.String())
		}
		break
	}
	return g
}

var nodes = Limits{Nodes: 1}

func TestThreefoldRepetition(t *testing.T) {
	w := &script{name: "w", moves: strings.Fields("g1f3 f3g1 g1f3 f3g1")}
	b := &script{name: "b", moves: strings.Fields("g8f6 f6g8 g8f6 f6g8")}
	g := play(t, "", w, b, nodes, GameConfig{})
	if g.Result != Draw || g.End != EndRepetition || g.Reason != "draw by threefold repetition" || len(g.Moves) != 8 {
		t.Fatalf("%v %q after %d plies", g.Result, g.Reason, len(g.Moves))
	}
}

// Same piece placement, but castling rights differ: not a repetition.
func TestRepetitionNeedsSameCastlingRights(t *testing.T) {
	w := &script{name: "w", moves: strings.Fields("h1g1 g1h1 h1g1 g1h1 h1g1")}
	b := &script{name: "b", moves: strings.Fields("h8g8 g8h8 h8g8 g8h8 h8g8")}
	g := play(t, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", w, b, nodes, GameConfig{})
	// The placement of the start recurs after plies 4 and 8, but without the
	// h-side castling rights: no repetition there. The position after ply 2
	// recurs after plies 6 and 10: threefold at ply 10.
	if g.Result != Draw || g.End != EndRepetition || g.Reason != "draw by threefold repetition" || len(g.Moves) != 10 {
		t.Fatalf("%v %q after %d plies", g.Result, g.Reason, len(g.Moves))
	}
}

func TestFiftyMoveRule(t *testing.T) {
	w := &script{name: "w", moves: []string{"b1b2"}}
	b := &script{name: "b"}
	g := play(t, "k7/8/8/8/8/8/8/1R2K3 w - - 99 80", w, b, nodes, GameConfig{})
	if g.Result != Draw || g.End != EndFiftyMoves || g.Reason != "draw by fifty-move rule" {
		t.Fatalf("%v %q", g.Result, g.Reason)
	}
}

func TestMateOnHundredthHalfMoveStands(t *testing.T) {
	w := &script{name: "w", moves: []string{"a1a8"}}
	b := &script{name: "b"}
	g := play(t, "4k3/8/4K3/8/8/8/8/R7 w - - 99 80", w, b, nodes, GameConfig{})
	if g.Result != WhiteWins || g.End != EndCheckmate || g.Reason != "White mates" {
		t.Fatalf("%v %q", g.Result, g.Reason)
	}
}

func TestStalemateAndInsufficientMaterial(t *testing.T) {
	g := play(t, "k7/8/1Q6/8/8/8/8/K7 w - - 0 1", &script{name: "w", moves: []string{"b6c7"}}, &script{name: "b"}, nodes, GameConfig{})
	if g.Result != Draw || g.End != EndStalemate || g.Reason != "draw by stalemate" {
		t.Fatalf("%v %q", g.Result, g.Reason)
	}
	g = play(t, "k7/8/8/8/8/8/1r6/K7 w - - 0 1", &script{name: "w", moves: []string{"a1b2"}}, &script{name: "b"}, nodes, GameConfig{})
	if g.Result != Draw || g.End != EndInsufficientMaterial || g.Reason != "draw by insufficient mating material" {
		t.Fatalf("%v %q", g.Result, g.Reason)
	}
}

func TestFlagFall(t *testing.T) {
	lim := Limits{Base: 20 * time.Millisecond}
	// Black (bare king) flags: White has a rook and wins.
	g := play(t, "k7/8/8/8/8/8/8/KR6 w - - 0 1", &script{name: "w", moves: []string{"b1b2"}}, &script{name: "b", moves: []string{"a8a7"}, delay: 50 * time.Millisecond}, lim, GameConfig{})
	if g.Result != WhiteWins || g.End != EndTimeForfeit || g.Termination != TermTimeForfeit || len(g.Incidents) != 1 || g.Incidents[0].Kind != IncTimeLoss || g.Incidents[0].Over < 29*time.Millisecond {
		t.Fatalf("%v %q %v", g.Result, g.Reason, g.Incidents)
	}
	// White flags but Black has a bare king: a draw.
	g = play(t, "k7/8/8/8/8/8/8/KR6 w - - 0 1", &script{name: "w", moves: []string{"b1b2"}, delay: 50 * time.Millisecond}, &script{name: "b"}, lim, GameConfig{})
	if g.Result != Draw || g.End != EndTimeForfeit || g.Termination != TermTimeForfeit {
		t.Fatalf("%v %q", g.Result, g.Reason)
	}
	// Within the margin: an overrun, recorded, no loss.
	g = play(t, "k7/8/8/8/8/8/8/KR6 w - - 0 1", &script{name: "w", moves: []string{"b1b2"}, delay: 30 * time.Millisecond}, &script{name: "b", moves: []string{"a8a7"}}, lim, GameConfig{TimeMargin: 50 * time.Millisecond, Adjudication: Adjudication{MaxMoves: 1}})
	if g.Result != Draw || g.End != EndAdjudication || len(g.Incidents) != 1 || g.Incidents[0].Kind != IncOverrun || g.Incidents[0].Over != 10*time.Millisecond {
		t.Fatalf("%v %q %v", g.Result, g.Reason, g.Incidents)
	}
}

func TestAdjudication(t *testing.T) {
	shuffleW := strings.Fields("g1f3 f3g1 b1c3 c3b1 g1f3 f3g1 b1c3 c3b1")
	shuffleB := strings.Fields("g8f6 f6g8 b8c6 c6b8 g8h6 h6g8 b8a6 a6b8")
	// Resign: White sees itself lost, Black sees itself winning, for 2 moves each.
	g := play(t, "", &script{name: "w", moves: shuffleW, score: -900}, &script{name: "b", moves: shuffleB, score: 900}, nodes,
		GameConfig{Adjudication: Adjudication{ResignMoves: 2, ResignScore: 600}})
	if g.Result != BlackWins || g.End != EndAdjudication || g.Termination != TermAdjudication || len(g.Moves) != 4 {
		t.Fatalf("resign: %v %q after %d", g.Result, g.Reason, len(g.Moves))
	}
	// No resignation when the engines disagree.
	g = play(t, "", &script{name: "w", moves: shuffleW, score: -900}, &script{name: "b", moves: shuffleB, score: -900}, nodes,
		GameConfig{Adjudication: Adjudication{ResignMoves: 2, ResignScore: 600, MaxMoves: 3}})
	if g.Result != Draw || !strings.Contains(g.Reason, "3 moves") {
		t.Fatalf("disagreeing scores: %v %q", g.Result, g.Reason)
	}
	// Draw: from move 2, |score| <= 10 for 2 moves each.
	g = play(t, "", &script{name: "w", moves: shuffleW, score: 5}, &script{name: "b", moves: shuffleB, score: -3}, nodes,
		GameConfig{Adjudication: Adjudication{DrawMoveNumber: 2, DrawMoves: 2, DrawScore: 10}})
	if g.Result != Draw || g.End != EndAdjudication || g.Reason != "draw by adjudication" || len(g.Moves) != 6 {
		t.Fatalf("draw: %v %q after %d", g.Result, g.Reason, len(g.Moves))
	}
}

func TestIllegalAndSANMoves(t *testing.T) {
	g := play(t, "", &script{name: "w", moves: []string{"Nf3", "e2e5"}}, &script{name: "b", moves: []string{"d7d5"}}, nodes, GameConfig{})
	if g.Result != BlackWins || g.End != EndIllegalMove || g.Termination != TermRulesInfract || len(g.Incidents) != 1 || g.Incidents[0].Kind != IncIllegal {
		t.Fatalf("%v %q %v", g.Result, g.Reason, g.Incidents)
	}
}

func TestLimits(t *testing.T) {
	for s, want := range map[string]Limits{
		"10+0.1":   {Base: 10 * time.Second, Inc: 100 * time.Millisecond},
		"40/60":    {Base: time.Minute, MovesToGo: 40},
		"1:30+1":   {Base: 90 * time.Second, Inc: time.Second},
		"0.5+0.01": {Base: 500 * time.Millisecond, Inc: 10 * time.Millisecond},
	} {
		var l Limits
		if _, err := l.ParseLimit("tc", s); err != nil || l != want {
			t.Errorf("tc=%s: %+v %v", s, l, err)
		}
		if s != "1:30+1" && l.PGNTimeControl() != s {
			t.Errorf("tc=%s: PGN %q", s, l.PGNTimeControl())
		}
	}
	for _, s := range []string{"", "x", "10+", "-1", "0", "40/", "a/10", "10+x"} {
		var l Limits
		if _, err := l.ParseLimit("tc", s); err == nil {
			t.Errorf("tc=%q accepted", s)
		}
	}
	if err := (Limits{}).Validate(); err == nil {
		t.Error("empty limits accepted")
	}
}

// TestPGNMoveCommentExtras: PGNOptions.TimeLeft, Nodes and SelDepth add
// fastchess's tl=, n= and sd= to each engine move's comment, the clock
// being the mover's after the move (increment added).
func TestPGNMoveCommentExtras(t *testing.T) {
	w := &script{name: "w", moves: []string{"f2f3", "g2g4"}, score: -50, delay: 100 * time.Millisecond}
	b := &script{name: "b", moves: []string{"e7e5", "d8h4"}, score: 50, delay: 100 * time.Millisecond}
	g := PlayGame(context.Background(), w, b, Limits{Base: 2 * time.Second, Inc: 500 * time.Millisecond}, Limits{Base: 2 * time.Second, Inc: 500 * time.Millisecond}, Opening{}, GameConfig{})
	if g.End != EndCheckmate || len(g.Info) != 4 {
		t.Fatalf("game %v %s, %d moves", g.End, g.Reason, len(g.Info))
	}
	if tl := g.Info[0].TimeLeft; tl < 2300*time.Millisecond || tl > 2400*time.Millisecond {
		t.Errorf("white's clock after its first move %v, want 2s - 0.1s + 0.5s", tl)
	}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	if err := WritePGN(bw, g, PGNOptions{TimeLeft: true, Nodes: true, SelDepth: true}); err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	if !strings.Contains(buf.String(), "{-0.50/1 0.100s, tl=2.400s, n=0, sd=0}") {
		t.Errorf("no tl=, n=, sd= in the comments:\n%s", buf.String())
	}
	buf.Reset()
	WritePGN(bw, g, PGNOptions{})
	bw.Flush()
	if strings.Contains(buf.String(), "tl=") || strings.Contains(buf.String(), "n=") {
		t.Errorf("extras without the options:\n%s", buf.String())
	}
}
