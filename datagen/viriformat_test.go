package datagen

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// viriFixtures are games whose viriformat bytes were derived by hand from
// the definition (viriformat.go names the sources), byte by byte in the
// comments; the writer must produce them and the reader read them back.
var viriFixtures = []struct {
	name  string
	game  Game
	hex   string
	moves []string // what the reader gives back (UCI)
}{
	{
		// Start position, 1.e4 e5 2.Nf3, draw.
		// occupancy ranks 1, 2, 7, 8 = ffff00000000ffff (LE bytes as shown).
		// pieces a1..h1: R with the Q right = 6 (unmoved rook), N 1, B 2,
		// Q 4, K 5, B 2, N 1, R with the K right 6; low nibble first:
		// 16 42 25 61. White pawns 0: 00000000; black pawns 0|8: 88888888.
		// a8..h8: 6|8 = e, 9, a, c, d, a, 9, e: 9e ca ad e9.
		// byte 24: White (0) << 7 | no en passant (64) = 40; halfmove 00;
		// fullmove 0100; eval 0000; result draw 01; extra 00.
		// e2e4: 12 | 28<<6 = 0x070c, eval 25 = 0x0019.
		// e7e5: 52 | 36<<6 = 0x0934, eval 18 = 0x0012.
		// g1f3: 6 | 21<<6 = 0x0546, eval 30 = 0x001e. Then 4 zero bytes.
		name: "start",
		game: Game{StartFEN: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", Result: Draw, Termination: TermDrawAdjudication,
			Moves: []Move{{UCI: "e2e4", Score: 25}, {UCI: "e7e5", Score: 18}, {UCI: "g1f3", Score: 30}}},
		hex: "ffff00000000ffff" + "16422561" + "00000000" + "88888888" + "9ecaade9" + "40" + "00" + "0100" + "0000" + "01" + "00" +
			"0c07" + "1900" + "3409" + "1200" + "4605" + "1e00" + "00000000",
		moves: []string{"e2e4", "e7e5", "g1f3"},
	},
	{
		// The three move flags. Pieces, by square: a1 R (6), e1 K (5),
		// h1 R (6), d5 p (0|8), e5 P (0), b7 P (0), a8 r (6|8 = e),
		// e8 k (5|8 = d), h8 r (e). occupancy bits 0 4 7 | 35 36 | 49 |
		// 56 60 63: bytes 91 00 00 00 18 00 02 91. nibbles 6 5 6 8 0 0 e d
		// e: 56 86 00 de 0e, then 11 zero bytes. byte 24: White | ep d6
		// (43 = 2b) = 2b; halfmove 00; fullmove 0100; eval 0000; White won
		// 02; extra 00.
		// e5d6 en passant: 36 | 43<<6 = 0x0ae4 | 1<<14 = 0x4ae4, eval 50 = 0x0032.
		// e8g8 castling, written king takes rook e8h8: 60 | 63<<6 =
		// 0x0ffc | 2<<14 = 0x8ffc, eval -40 = 0xffd8.
		// b7a8q: 49 | 56<<6 | queen 3<<12 = 0x3e31 | 3<<14 = 0xfe31,
		// eval 900 = 0x0384. Then 4 zero bytes.
		name: "flags",
		game: Game{StartFEN: "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1", Result: WhiteWins, Termination: TermWinAdjudication,
			Moves: []Move{{UCI: "e5d6", Score: 50}, {UCI: "e8g8", Score: -40}, {UCI: "b7a8q", Score: 900}}},
		hex: "9100000018000291" + "5686" + "00de0e" + "0000000000000000000000" + "2b" + "00" + "0100" + "0000" + "02" + "00" +
			"e44a" + "3200" + "fc8f" + "d8ff" + "31fe" + "8403" + "00000000",
		moves: []string{"e5d6", "e8g8", "b7a8q"},
	},
	{
		// Chess960 castling rights (Shredder-FEN GB: rooks on g1 and b1).
		// Pieces by square: b1 R that castles (6), e1 K (5), g1 R (6),
		// e8 k (5|8 = d). occupancy bits 1 4 6 | 60: bytes 52 00 00 00 00
		// 00 00 10. nibbles 6 5 6 d: 56 d6, then 14 zero bytes. byte 24:
		// White, no en passant = 40; halfmove 00; fullmove 0100; eval
		// 0000; draw 01; extra 00.
		// e1g1 is castling with the g1 rook (king takes rook, the king
		// ends on g1, the rook on f1): 4 | 6<<6 = 0x0184 | 2<<14 = 0x8184,
		// eval 10 = 0x000a. e8d8: 60 | 59<<6 = 0x0efc, eval 5. b1b8: 1 |
		// 57<<6 = 0x0e41, eval 300 = 0x012c. Then 4 zero bytes.
		name: "chess960",
		game: Game{StartFEN: "4k3/8/8/8/8/8/8/1R2K1R1 w GB - 0 1", Result: Draw, Termination: TermDrawAdjudication,
			Moves: []Move{{UCI: "e1g1", Score: 10}, {UCI: "e8d8", Score: 5}, {UCI: "b1b8", Score: 300}}},
		hex: "5200000000000010" + "56d6" + "0000000000000000000000000000" + "40" + "00" + "0100" + "0000" + "01" + "00" +
			"8481" + "0a00" + "fc0e" + "0500" + "410e" + "2c01" + "00000000",
		moves: []string{"e1g1", "e8d8", "b1b8"},
	},
}

// TestViriHandVectors: the writer gives the hand-derived bytes, and the
// reader reads them back to the games' positions, moves and scores.
func TestViriHandVectors(t *testing.T) {
	for _, c := range viriFixtures {
		recs := Records(c.game, Filters{})
		got, err := AppendViri(nil, c.game, recs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if hex.EncodeToString(got) != c.hex {
			t.Errorf("%s:\n got %x\nwant %s", c.name, got, c.hex)
		}
		want, _ := hex.DecodeString(c.hex)
		var games []ViriGame
		if err := ReadViri(bytes.NewReader(want), func(g ViriGame) error { games = append(games, g); return nil }); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(games) != 1 || len(games[0].Positions) != len(recs) || games[0].Result != c.game.Result {
			t.Fatalf("%s: read %+v", c.name, games)
		}
		for i, p := range games[0].Positions {
			if p.FEN != recs[i].FEN || p.Score != recs[i].Score || p.Move != c.moves[i] {
				t.Errorf("%s position %d: read %+v, want %s %d %s", c.name, i, p, recs[i].FEN, recs[i].Score, c.moves[i])
			}
		}
	}
}

// TestViriRoundTrip: games of the embedded engine, written in viriformat
// and in text under several filter settings, read back by the reader:
// every position's FEN, score, result and move equal the records (and the
// text file's), and the file holds one viriformat game a run of records at
// consecutive plies, nothing else.
func TestViriRoundTrip(t *testing.T) {
	games := testBatch(t)
	for _, f := range []Filters{{}, DefaultSettings().Filters, {MinPly: 20, SkipTactical: true}} {
		t.Run(fmt.Sprintf("%+v", f), func(t *testing.T) {
			var text, viri bytes.Buffer
			tw, vw := NewWriter(&text, FormatText, PGNInfo{}), NewWriter(&viri, FormatViri, PGNInfo{})
			type want struct {
				rec  Record
				move string
			}
			var all []want
			runs := 0
			for _, g := range games {
				recs := Records(g, f)
				for i, r := range recs {
					all = append(all, want{r, g.Moves[r.Ply].UCI})
					if i == 0 || recs[i-1].Ply+1 != r.Ply {
						runs++
					}
				}
				for _, w := range []*Writer{tw, vw} {
					if err := w.WriteGame(g, recs); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tw.Flush() != nil || vw.Flush() != nil {
				t.Fatal("flush to memory failed")
			}
			if size := runs*(ViriBoardSize+ViriMoveSize) + len(all)*ViriMoveSize; viri.Len() != size || vw.Records != len(all) {
				t.Fatalf("%d bytes, %d records written; want %d bytes for %d runs of %d records", viri.Len(), vw.Records, size, runs, len(all))
			}
			var texts []Record
			if err := ReadRecords(&text, FormatText, func(r Record) error { texts = append(texts, r); return nil }); err != nil {
				t.Fatal(err)
			}
			i, read := 0, 0
			err := ReadViri(bytes.NewReader(viri.Bytes()), func(g ViriGame) error {
				read++
				for _, p := range g.Positions {
					w := all[i]
					if p.FEN != w.rec.FEN || p.FEN != texts[i].FEN || p.Score != w.rec.Score || p.Score != texts[i].Score ||
						g.Result != w.rec.Result || g.Result != texts[i].Result || p.Move != w.move {
						return fmt.Errorf("position %d: read %+v %s, wrote %+v %s", i, p, g.Result, w.rec, w.move)
					}
					i++
				}
				return nil
			})
			if err != nil || i != len(all) || read != runs {
				t.Fatalf("%v after %d of %d positions, %d of %d games", err, i, len(all), read, runs)
			}
			t.Logf("%d positions, %d viriformat games, %d bytes: %.2f bytes a position", len(all), runs, viri.Len(), float64(viri.Len())/float64(len(all)))
		})
	}
}

// TestViriBadFiles: a truncated or corrupt file is refused with an error
// naming the file and the byte offset; the intact file reads.
func TestViriBadFiles(t *testing.T) {
	good, _ := hex.DecodeString(viriFixtures[0].hex + viriFixtures[1].hex)
	second := len(good) / 2 // both fixtures are 32 + 3*4 + 4 = 48 bytes
	patch := func(at int, b ...byte) []byte {
		c := bytes.Clone(good)
		copy(c[at:], b)
		return c
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"intact", good, ""},
		{"truncated board", good[:second+10], fmt.Sprintf("byte offset %d: truncated: a game's board needs 32 bytes, the file ends after 10", second)},
		{"truncated move", good[:34], "byte offset 32: truncated: a move and eval"},
		{"no terminator", good[:second-2], fmt.Sprintf("byte offset %d: truncated", second-4)},
		{"piece code 7", patch(8, 0x17), "byte offset 0: game board: piece 1 (square a1): code 7 is no piece"},
		{"result 3", patch(30, 3), "byte offset 0: game board: result byte 3"},
		{"ep rank", patch(24, 20), "en-passant square 20 is not on the sixth rank"},
		{"33 pieces", patch(0, 0xff, 0xff, 0xff), "byte offset 0: game board: occupancy"},
		{"no king", patch(10, 0x22), "byte offset 0: game board:"},
		{"illegal move", patch(32, 0x0c, 0x08), "byte offset 32: move 1 of the game at byte offset 0: 0x080c (e2a5)"},
		{"castle flag on a plain move", patch(32, 0x0c, 0x87), "byte offset 32: move 1 of the game at byte offset 0: 0x870c (e2e4): flag 2 does not match"},
		{"promotion bits", patch(32, 0x0c, 0x17), "promotion bits without the promotion flag"},
		{"en passant unflagged", patch(second+32, 0xe4, 0x0a), fmt.Sprintf("byte offset %d: move 1 of the game at byte offset %d: 0x0ae4 (e5d6): flag 0 does not match", second+32, second)},
	}
	dir := t.TempDir()
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".vf")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		n := 0
		err := ReadViriFile(path, func(g ViriGame) error { n += len(g.Positions); return nil })
		switch {
		case c.want == "" && (err != nil || n != 6):
			t.Errorf("%s: %v after %d positions, want 6", c.name, err, n)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %s: ...%s...", c.name, err, path, c.want)
		}
	}
}
