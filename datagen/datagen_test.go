package datagen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
)

const stockfish = "/usr/games/stockfish"

// batch is a small batch of the embedded engine's games, played once for
// the tests that only read games.
var batch = sync.OnceValues(func() ([]Game, error) {
	return PlayGames(context.Background(), newBuiltin, testSettings(600), 7, 6)
})

func testBatch(t *testing.T) []Game {
	t.Helper()
	g, err := batch()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRecordsLegalByStockfish: every record's FEN is a legal position by
// Stockfish's reading (it gives the same FEN back with `d` and the same
// number of legal moves with `go perft 1`), and every record carries its
// game's result and a ply of an engine move.
func TestRecordsLegalByStockfish(t *testing.T) {
	if _, err := os.Stat(stockfish); err != nil {
		t.Skip("no stockfish")
	}
	games := testBatch(t)
	var recs []Record
	for gi, g := range games {
		rs := Records(g, DefaultSettings().Filters)
		if len(rs) == 0 || len(rs) != Count(g, DefaultSettings().Filters) {
			t.Fatalf("game %d: %d records, Count %d", gi, len(rs), Count(g, DefaultSettings().Filters))
		}
		for _, r := range rs {
			if r.Result != g.Result {
				t.Fatalf("game %d ply %d: result %s, the game's %s", gi, r.Ply, r.Result, g.Result)
			}
			if g.Moves[r.Ply].Random || r.Score != g.Moves[r.Ply].Score {
				t.Fatalf("game %d ply %d: not the engine move's score", gi, r.Ply)
			}
		}
		recs = append(recs, rs...)
	}
	var in strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&in, "position fen %s\nd\ngo perft 1\n", r.FEN)
	}
	in.WriteString("quit\n")
	cmd := exec.Command(stockfish)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var fens, counts []string
	for _, line := range strings.Split(string(out), "\n") {
		if f, ok := strings.CutPrefix(line, "Fen: "); ok {
			fens = append(fens, strings.TrimSpace(f))
		}
		if n, ok := strings.CutPrefix(line, "Nodes searched: "); ok {
			counts = append(counts, strings.TrimSpace(n))
		}
	}
	if len(fens) != len(recs) || len(counts) != len(recs) {
		t.Fatalf("stockfish answered %d FENs and %d counts for %d records", len(fens), len(counts), len(recs))
	}
	for i, r := range recs {
		pos, _ := engine.ParseFEN(r.FEN)
		if fens[i] != r.FEN || counts[i] != strconv.Itoa(pos.LegalMoveCount()) {
			t.Fatalf("record %d: %s: stockfish reads %s with %s moves, we %d", i, r.FEN, fens[i], counts[i], pos.LegalMoveCount())
		}
	}
	t.Logf("%d records of %d games checked by stockfish", len(recs), len(games))
}

// TestFilters: each filter removes what it says and only that.
func TestFilters(t *testing.T) {
	games := testBatch(t)
	all := Filters{}
	var inCheck, tactical, kept int
	for _, g := range games {
		kept += Count(g, DefaultSettings().Filters)
		for _, r := range Records(g, all) {
			pos, _ := engine.ParseFEN(r.FEN)
			m, _ := pos.ParseUCIMove(g.Moves[r.Ply].UCI)
			if pos.InCheck() {
				inCheck++
			}
			if pos.IsCapture(m) || m.IsPromotion() {
				tactical++
			}
		}
		for _, r := range Records(g, Filters{SkipInCheck: true, SkipTactical: true, MinPly: 30}) {
			pos, _ := engine.ParseFEN(r.FEN)
			m, _ := pos.ParseUCIMove(g.Moves[r.Ply].UCI)
			if pos.InCheck() || pos.IsCapture(m) || m.IsPromotion() || r.Ply < 30 {
				t.Fatalf("ply %d kept against the filters", r.Ply)
			}
		}
	}
	if inCheck == 0 || tactical == 0 || kept == 0 {
		t.Fatalf("test batch too small to test the filters: %d in check, %d tactical, %d kept", inCheck, tactical, kept)
	}
}

func encode(t *testing.T, games []Game) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := EncodeShard(&b, games); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestShardRoundTrip(t *testing.T) {
	games := testBatch(t)
	data := encode(t, games)
	got, err := DecodeShard(bytes.NewReader(data), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, games) {
		t.Fatal("decoded games differ")
	}
	plies := 0
	for _, g := range games {
		plies += len(g.Moves)
	}
	t.Logf("%d games, %d plies: %d bytes (%.2f bytes a ply)", len(games), plies, len(data), float64(len(data))/float64(plies))
	empty, err := DecodeShard(bytes.NewReader(encode(t, nil)), DefaultLimits())
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty shard: %v, %d games", err, len(empty))
	}
}

// mateGame is a game that ends by the rules: fool's mate.
func mateGame() Game {
	mv := func(s string, score int) Move { return Move{UCI: s, Score: score, Depth: 5} }
	start := engine.StartPosition()
	return Game{
		StartFEN: start.FEN(),
		Moves:    []Move{{UCI: "f2f3", Random: true}, {UCI: "e7e5", Random: true}, mv("g2g4", -300), mv("d8h4", -MateScore+1)},
		Result:   BlackWins, Termination: TermCheckmate,
	}
}

func TestDecodeShardRefuses(t *testing.T) {
	ok := mateGame()
	if _, err := DecodeShard(bytes.NewReader(encode(t, []Game{ok})), DefaultLimits()); err != nil {
		t.Fatalf("fool's mate refused: %v", err)
	}
	cases := []struct {
		name string
		edit func(g *Game)
		want string
	}{
		{"illegal move", func(g *Game) { g.Moves[2].UCI = "g2g5" }, "game 0: ply 2: illegal move g2g5"},
		{"bad FEN", func(g *Game) { g.StartFEN = "rnbqkbnr/pppppppp/8/8 w KQkq - 0 1" }, "game 0: start FEN"},
		{"wrong result", func(g *Game) { g.Result = WhiteWins }, "the final position ends the game by checkmate (0-1), the shard says checkmate (1-0)"},
		{"draw claimed at mate", func(g *Game) { g.Result, g.Termination = Draw, TermDrawAdjudication }, "ends the game by checkmate"},
		{"mate claimed", func(g *Game) { g.Moves = g.Moves[:3] }, "termination checkmate, but the final position does not end the game"},
		{"move after mate", func(g *Game) { g.Moves = append(g.Moves, Move{UCI: "e1f2"}) }, "ply 4: move e1f2 after the game ended (checkmate)"},
		{"win against the score", func(g *Game) {
			g.Moves = g.Moves[:3]
			g.Result, g.Termination = WhiteWins, TermWinAdjudication
		}, "win adjudication with result 1-0, but the last score is -300"},
		{"no result", func(g *Game) { g.Result = NoResult }, "result code 0"},
		{"bad termination", func(g *Game) { g.Termination = 99 }, "termination code 99"},
	}
	for _, c := range cases {
		g := mateGame()
		c.edit(&g)
		_, err := DecodeShard(bytes.NewReader(encode(t, []Game{ok, g})), DefaultLimits())
		want := strings.Replace(c.want, "game 0", "game 1", 1)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", c.name, err, want)
		}
	}

	data := encode(t, []Game{ok, ok, ok})
	for _, c := range []struct {
		name string
		lim  Limits
		data []byte
		want string
	}{
		{"too many games", Limits{MaxGames: 2, MaxPlies: 10, MaxBytes: 1 << 20}, data, "3 games: at most 2"},
		{"too many plies", Limits{MaxGames: 10, MaxPlies: 3, MaxBytes: 1 << 20}, data, "4 plies: at most 3"},
		{"too many bytes", Limits{MaxGames: 10, MaxPlies: 10, MaxBytes: 100}, data, "more than 100 bytes decompressed"},
		{"truncated", DefaultLimits(), data[:len(data)-3], "unexpected EOF"},
		{"bad magic", DefaultLimits(), append([]byte("XRBDGS"), data[6:]...), "bad magic"},
		{"new version", DefaultLimits(), append([]byte("ARBDGS\x02"), data[7:]...), "version 2"},
		{"empty", DefaultLimits(), nil, "header"},
	} {
		_, err := DecodeShard(bytes.NewReader(c.data), c.lim)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// TestDecodeShardChecksum: a score changed in the payload (legal moves
// still) is caught by the checksum.
func TestDecodeShardChecksum(t *testing.T) {
	g := mateGame()
	data := encode(t, []Game{g})
	g.Moves[2].Score = -301
	other := encode(t, []Game{g})
	// Splice: the payload of the second with the checksum of the first.
	payload := func(d []byte) []byte {
		b, err := io.ReadAll(flateReader(d[7:]))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	p1, p2 := payload(data), payload(other)
	bad := append(append([]byte{}, p2[:len(p2)-4]...), p1[len(p1)-4:]...)
	_, err := DecodeShard(bytes.NewReader(append([]byte("ARBDGS\x01"), deflate(bad)...)), DefaultLimits())
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("got %v", err)
	}
}

func FuzzDecodeShard(f *testing.F) {
	var b bytes.Buffer
	EncodeShard(&b, []Game{mateGame()})
	f.Add(b.Bytes())
	b.Reset()
	g := mateGame()
	g.Moves, g.Result, g.Termination = g.Moves[:3], Draw, TermMaxMoves
	EncodeShard(&b, []Game{g, mateGame()})
	f.Add(b.Bytes())
	f.Add([]byte("ARBDGS\x01"))
	lim := Limits{MaxGames: 50, MaxPlies: 300, MaxBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, data []byte) {
		games, err := DecodeShard(bytes.NewReader(data), lim)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same games, and gives records.
		var b bytes.Buffer
		if err := EncodeShard(&b, games); err != nil {
			t.Fatal(err)
		}
		again, err := DecodeShard(&b, lim)
		if err != nil || !reflect.DeepEqual(again, games) {
			t.Fatalf("re-encoded shard: %v", err)
		}
		for _, g := range games {
			Records(g, Filters{})
		}
	})
}

// TestBulletVector checks AppendBullet against records worked out by hand
// from bulletformat's ChessBoard layout.
func TestBulletVector(t *testing.T) {
	cases := []struct {
		rec  Record
		want string // hex of the 32 bytes
	}{
		// Start position, White to move, +25, White won. occ = ranks 1, 2,
		// 7, 8; pieces a1..h1 R N B Q K B N R = 3 1 2 4 5 2 1 3 (low nibble
		// first: 13 42 25 31), 8 pawns 0, 8 black pawns 8 (88 88 88 88),
		// a8..h8 r n b q k b n r = 11 9 10 12 13 10 9 11 (9b ca ad b9);
		// score 25 = 19 00; result 2; ksq e1 = 4; opp_ksq e8^56 = 4.
		{Record{FEN: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", Score: 25, Result: WhiteWins},
			"ffff00000000ffff" + "13422531" + "00000000" + "88888888" + "9bcaadb9" + "1900" + "02" + "04" + "04" + "000000"},
		// Black to move, White-relative -50, Black won: the board flips
		// (sq^56) and colours swap. Black king e8 -> e1 (4) ours: 5; white
		// king e1 -> e8 (60) theirs: 13; white rook h1 -> h8 (63): 11.
		// occ = bits 4, 60, 63; pcs 5|13<<4 = d5, 11 = 0b; score +50 = 32 00;
		// result 2 (the side to move won); ksq 4; opp_ksq 60^56 = 4.
		{Record{FEN: "4k3/8/8/8/8/8/8/4K2R b K - 0 1", Score: -50, Result: BlackWins},
			"1000000000000090" + "d50b000000000000" + "0000000000000000" + "3200" + "02" + "04" + "04" + "000000"},
	}
	for _, c := range cases {
		got, err := AppendBullet(nil, c.rec)
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(got) != c.want {
			t.Errorf("%s:\n got %x\nwant %s", c.rec.FEN, got, c.want)
		}
		back, err := DecodeBullet(got)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := AppendBullet(nil, back)
		if !bytes.Equal(again, got) {
			t.Errorf("%s: decoded %+v re-encodes to %x", c.rec.FEN, back, again)
		}
	}
}

// TestFormatsRoundTrip writes the test batch in text and bulletformat and
// reads it back.
func TestFormatsRoundTrip(t *testing.T) {
	games := testBatch(t)
	var text, bin bytes.Buffer
	tw := NewWriter(&text, FormatText, PGNInfo{})
	bw := NewWriter(&bin, FormatBullet, PGNInfo{})
	var all []Record
	for _, g := range games {
		rs := Records(g, DefaultSettings().Filters)
		all = append(all, rs...)
		if err := tw.WriteGame(g, rs); err != nil {
			t.Fatal(err)
		}
		if err := bw.WriteGame(g, rs); err != nil {
			t.Fatal(err)
		}
	}
	tw.Flush()
	bw.Flush()
	if bin.Len() != BulletRecordSize*len(all) || tw.Records != len(all) {
		t.Fatalf("%d bytes of bulletformat, %d text records, for %d records", bin.Len(), tw.Records, len(all))
	}
	i := 0
	err := ReadRecords(&text, FormatText, func(r Record) error {
		w := all[i]
		if r.FEN != w.FEN || r.Score != w.Score || r.Result != w.Result {
			return fmt.Errorf("text record %d: %+v, wrote %+v", i, r, w)
		}
		i++
		return nil
	})
	if err != nil || i != len(all) {
		t.Fatalf("text: %v after %d records", err, i)
	}
	i = 0
	err = ReadRecords(bytes.NewReader(bin.Bytes()), FormatBullet, func(r Record) error {
		w := all[i]
		pos, _ := engine.ParseFEN(w.FEN)
		score, res := w.Score, w.Result
		if pos.SideToMove() == engine.Black {
			score, res = -score, [4]Result{NoResult, BlackWins, Draw, WhiteWins}[res]
		}
		if r.Score != score || r.Result != res {
			return fmt.Errorf("bullet record %d: %+v, wrote %+v", i, r, w)
		}
		i++
		return nil
	})
	if err != nil || i != len(all) {
		t.Fatalf("bulletformat: %v after %d records", err, i)
	}
	if _, err := ParseText("8/8/8/8/8/8/8/8 w - - 0 1 | 0 | 0.5"); err == nil {
		t.Fatal("a board without kings read as a record")
	}
}

// TestPGNByPgnExtract: pgn-extract reads our PGN back to the same moves.
func TestPGNByPgnExtract(t *testing.T) {
	bin, err := exec.LookPath("pgn-extract")
	if err != nil {
		bin = "/usr/games/pgn-extract"
		if _, err := os.Stat(bin); err != nil {
			t.Skip("no pgn-extract")
		}
	}
	games := testBatch(t)
	var b bytes.Buffer
	w := NewWriter(&b, FormatPGN, PGNInfo{Engine: "dev"})
	for _, g := range games {
		if err := w.WriteGame(g, nil); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if !strings.Contains(b.String(), "{book}") || !strings.Contains(b.String(), "/") {
		t.Fatalf("no comments:\n%s", b.String()[:500])
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "games.pgn")
	os.WriteFile(in, b.Bytes(), 0o644)
	out, err := exec.Command(bin, "-s", "-Wuci", "--notags", in).CombinedOutput()
	if err != nil {
		t.Fatalf("pgn-extract: %v\n%s", err, out)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	got := strings.Fields(strings.Join(lines, " "))
	var want []string
	for _, g := range games {
		for _, m := range g.Moves {
			want = append(want, m.UCI)
		}
		want = append(want, g.Result.String())
	}
	if strings.ToLower(strings.Join(got, " ")) != strings.Join(want, " ") { // pgn-extract writes promotions in upper case
		t.Fatalf("pgn-extract reads\n%s\nwe wrote\n%s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		edit func(s *Settings)
		want string
	}{
		{func(s *Settings) { s.Nodes = 0 }, "nodes: 0: must be > 0"},
		{func(s *Settings) { s.RandomPliesMin, s.RandomPliesMax = 9, 8 }, "random-plies: 9-8"},
		{func(s *Settings) { s.RandomPliesMin, s.RandomPliesMax = 0, 0 }, "random-plies: 0-0 without openings"},
		{func(s *Settings) { s.Openings = []string{"not a fen"} }, "openings: position 1:"},
		{func(s *Settings) { s.Openings = []string{"7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"} }, "the game is already over (stalemate)"},
		{func(s *Settings) { s.Chess960 = true }, "chess960: not supported"},
		{func(s *Settings) { s.Adjudication.MaxMoves = 0 }, "adjudicate max-moves: 0"},
		{func(s *Settings) { s.Adjudication.WinScore = 0 }, "adjudicate win-score: 0"},
		{func(s *Settings) { s.Filters.MinPly = -1 }, "min-ply: -1"},
	}
	for _, c := range cases {
		s := DefaultSettings()
		c.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestRandomPliesNoPosition: from a position whose only move ends the
// game (the king takes the last other piece), no random ply gives a
// playable position: a clear error after a bounded number of draws.
func TestRandomPliesNoPosition(t *testing.T) {
	s := testSettings(100)
	s.Openings = []string{"8/8/8/8/8/4k3/1q6/K7 w - - 0 1"}
	s.RandomPliesMin, s.RandomPliesMax = 1, 1
	_, err := PlayGames(context.Background(), newBuiltin, s, 1, 1)
	if err == nil || !strings.Contains(err.Error(), "random-plies: 100 draws of 1-1 random plies from 8/8/8/8/8/4k3/1q6/K7 w - - 0 1 all ended the game") {
		t.Fatalf("got %v", err)
	}
	s.Openings = []string{"8/8/8/8/8/4k3/1q6/K7 w - - 0 1 x"}
	if _, err := PlayGames(context.Background(), newBuiltin, s, 1, 1); err == nil || !strings.Contains(err.Error(), "game 0: openings: position 1: ") {
		t.Fatalf("a bad opening: got %v", err)
	}
}

// badEngine builds testing/testengines/badengine once.
var badEngine = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "datagen-badengine")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "badengine")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/arbiter-chess/arbiter/testing/testengines/badengine").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return bin, nil
})

func TestEngineFailures(t *testing.T) {
	bin, err := badEngine()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ mode, want string }{
		{"noscore", `engine "bad" reported no score at ply 11`},
		{"manynodes", `engine "bad" searched 1000000000 nodes at ply 11 with a limit of 100: it ignores the node limit`},
		{"crash", `engine "bad"`},
	} {
		newPlayer := func() (match.Player, error) {
			return match.NewPlayer(match.EngineConfig{Name: "bad", Cmd: bin, Args: []string{"-mode", c.mode, "-at", "3"}}, nil)
		}
		s := testSettings(100)
		s.RandomPliesMin, s.RandomPliesMax = 9, 9
		_, err := PlayGames(context.Background(), newPlayer, s, 1, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.mode, err, c.want)
		}
	}
}

// TestStockfishGames: a UCI engine at fixed nodes plays datagen games too.
func TestStockfishGames(t *testing.T) {
	if _, err := os.Stat(stockfish); err != nil {
		t.Skip("no stockfish")
	}
	newPlayer := func() (match.Player, error) {
		return match.NewPlayer(match.EngineConfig{Name: "sf", Cmd: stockfish, Options: []match.Option{{Name: "Hash", Value: "8"}}}, nil)
	}
	s := testSettings(2000)
	games, err := PlayGames(context.Background(), newPlayer, s, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	data := encode(t, games)
	back, err := DecodeShard(bytes.NewReader(data), DefaultLimits())
	if err != nil || !reflect.DeepEqual(back, games) {
		t.Fatalf("stockfish games through a shard: %v", err)
	}
	if err := CheckBatch(s, 3, back); err != nil {
		t.Fatalf("stockfish games: %v", err)
	}
	for _, g := range games {
		if Count(g, s.Filters) == 0 {
			t.Fatalf("a game without records: %+v", g)
		}
		t.Logf("%d plies, %s (%s)", len(g.Moves), g.Result, g.Termination)
	}
}

// bulletFromStr is bulletformat's ChessBoard::from_str (src/chess.rs,
// v1.8.0) transcribed line by line: an oracle for AppendBullet that
// parses the text line rather than our Position.
func bulletFromStr(t *testing.T, s string) []byte {
	t.Helper()
	split := strings.Split(s, "|")
	fen := split[0]
	score := strings.TrimSpace(split[1])
	wdl := strings.TrimSpace(split[2])
	parts := strings.Fields(fen)
	boardStr, stmStr := parts[0], parts[1]
	stm := 0
	if stmStr == "b" {
		stm = 1
	}
	var occ uint64
	var pcs [16]byte
	var ksq, oppKsq byte
	idx := 0
	parseRow := func(i int, row string) {
		col := 0
		for _, ch := range row {
			if ch >= '1' && ch <= '8' {
				col += int(ch - '0')
			} else if piece := strings.IndexRune("PNBRQKpnbrqk", ch); piece >= 0 {
				square := 8*i + col
				piece = (piece/6)<<3 | (piece % 6)
				if stm == 1 {
					piece ^= 8
					square ^= 56
				}
				if piece == 5 {
					ksq = byte(square)
				}
				if piece == 13 {
					oppKsq = byte(square) ^ 56
				}
				occ |= 1 << square
				pcs[idx/2] |= byte(piece) << (4 * (idx & 1))
				idx++
				col++
			}
		}
	}
	rows := strings.Split(boardStr, "/")
	if stm == 1 {
		for i, row := range rows {
			parseRow(7-i, row)
		}
	} else {
		for i := range rows {
			parseRow(i, rows[len(rows)-1-i])
		}
	}
	sc, err := strconv.Atoi(score)
	if err != nil {
		t.Fatal(err)
	}
	result := map[string]int{"1.0": 2, "0.5": 1, "0.0": 0}[wdl]
	if stm == 1 {
		sc, result = -sc, 2-result
	}
	out := binary.LittleEndian.AppendUint64(nil, occ)
	out = append(out, pcs[:]...)
	out = binary.LittleEndian.AppendUint16(out, uint16(int16(sc)))
	return append(out, byte(result), ksq, oppKsq, 0, 0, 0)
}

// TestBulletMatchesFromStr: for every record of the test batch, our
// ChessBoard is the one bullet's own text parser builds from our text line.
func TestBulletMatchesFromStr(t *testing.T) {
	n := 0
	for _, g := range testBatch(t) {
		for _, r := range Records(g, Filters{}) {
			got, err := AppendBullet(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			line := strings.TrimSuffix(string(AppendText(nil, r)), "\n")
			if want := bulletFromStr(t, line); !bytes.Equal(got, want) {
				t.Fatalf("%s:\n got %x\nwant %x", line, got, want)
			}
			n++
		}
	}
	t.Logf("%d records", n)
}

// TestCheckBatch: the games PlayGames gives pass; a game whose opening is
// not the seed's, that goes on after its adjudication, or that stops
// where none ends it, does not.
func TestCheckBatch(t *testing.T) {
	s := testSettings(600)
	games := testBatch(t)
	if err := CheckBatch(s, 7, games); err != nil {
		t.Fatal(err)
	}
	if err := CheckBatch(s, 8, games); err == nil || !strings.Contains(err.Error(), "game 0: starts from") && !strings.Contains(err.Error(), "the seed's random ply") {
		t.Fatalf("another seed: %v", err)
	}
	clone := func() []Game {
		c := make([]Game, len(games))
		for i, g := range games {
			c[i] = g
			c[i].Moves = append([]Move(nil), g.Moves...)
		}
		return c
	}
	// The first adjudicated game, cut two plies short.
	adj := -1
	for i, g := range games {
		if !g.Termination.ByRules() {
			adj = i
			break
		}
	}
	if adj < 0 {
		t.Fatal("no adjudicated game in the test batch")
	}
	c := clone()
	c[adj].Moves = c[adj].Moves[:len(c[adj].Moves)-2]
	if err := CheckBatch(s, 7, c); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("game %d: ply %d: the game ends by %s", adj, len(c[adj].Moves)-1, games[adj].Termination)) {
		t.Fatalf("a game cut short: %v", err)
	}
	// Gone on after the adjudication: two more plies (scores of the same sign).
	c = clone()
	g := &c[adj]
	pos, _ := engine.ParseFEN(g.StartFEN)
	for _, m := range g.Moves {
		mv, _ := pos.ParseUCIMove(m.UCI)
		pos.MakeMove(mv)
	}
	last := g.Moves[len(g.Moves)-1]
	for k := 0; k < 2; k++ {
		mv := pos.LegalMoves()[0]
		g.Moves = append(g.Moves, Move{UCI: pos.UCIMove(mv), Score: last.Score, Depth: 1})
		pos.MakeMove(mv)
	}
	if err := CheckBatch(s, 7, c); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("game %d: ply %d: the game goes on after", adj, len(games[adj].Moves)-1)) {
		t.Fatalf("a game gone on: %v", err)
	}
	// A random ply changed.
	c = clone()
	c[0].Moves[0].UCI = "a2a3"
	if c[0].Moves[0].UCI == games[0].Moves[0].UCI {
		c[0].Moves[0].UCI = "h2h3"
	}
	if err := CheckBatch(s, 7, c); err == nil || !strings.Contains(err.Error(), "game 0: ply 0:") {
		t.Fatalf("a random ply changed: %v", err)
	}
}
