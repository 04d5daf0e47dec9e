// Command datagencheck checks a pulled DATAGEN dataset against itself and
// against Stockfish, as the acceptance run of docs/datagen.md does:
//
//   - the text and bulletformat files hold exactly -n records, the same
//     ones (position, score, result) in the same order;
//
//   - no position appears twice (unless -duplicates);
//
//   - every record is the position before a scored move of a game of the
//     PGN file, in the PGN's order, with that move's score and that game's
//     result (so every position of a game carries the game's result);
//
//   - every record's FEN is legal as Stockfish sees it: it echoes the FEN
//     back (`d`) and finds legal moves (`go perft 1`).
//
//     go run ./scripts/datagencheck -n 200000 -text out.text -bullet out.bulletformat -pgn out.pgn -stockfish /usr/games/stockfish
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/engine"
)

func main() {
	n := flag.Int("n", 0, "records expected")
	textPath := flag.String("text", "", "text file")
	bulletPath := flag.String("bullet", "", "bulletformat file")
	pgnPath := flag.String("pgn", "", "PGN file")
	sf := flag.String("stockfish", "/usr/games/stockfish", "Stockfish for the legality check (\"\" skips it)")
	dups := flag.Bool("duplicates", false, "the dataset keeps duplicates")
	flag.Parse()
	if err := run(*n, *textPath, *bulletPath, *pgnPath, *sf, *dups); err != nil {
		fmt.Fprintln(os.Stderr, "datagencheck:", err)
		os.Exit(1)
	}
}

func key(fen string) string {
	f := strings.Fields(fen)
	return strings.Join(f[:min(4, len(f))], " ")
}

func read(path string, f datagen.Format) ([]datagen.Record, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []datagen.Record
	err = datagen.ReadRecords(fh, f, func(r datagen.Record) error { out = append(out, r); return nil })
	return out, err
}

func run(n int, textPath, bulletPath, pgnPath, sf string, dups bool) error {
	text, err := read(textPath, datagen.FormatText)
	if err != nil {
		return fmt.Errorf("%s: %v", textPath, err)
	}
	if len(text) != n {
		return fmt.Errorf("%s: %d records, want %d", textPath, len(text), n)
	}
	fmt.Printf("text: %d records\n", len(text))
	if bulletPath != "" {
		data, err := os.ReadFile(bulletPath)
		if err != nil {
			return err
		}
		if len(data) != n*datagen.BulletRecordSize {
			return fmt.Errorf("%s: %d bytes, want %d records of %d", bulletPath, len(data), n, datagen.BulletRecordSize)
		}
		// Each record is the text record's, as bulletformat encodes it
		// (side-to-move relative).
		var want []byte
		for i, r := range text {
			if want, err = datagen.AppendBullet(want[:0], r); err != nil {
				return fmt.Errorf("record %d: %v", i, err)
			}
			if got := data[i*datagen.BulletRecordSize : (i+1)*datagen.BulletRecordSize]; string(got) != string(want) {
				return fmt.Errorf("record %d: bulletformat % x, the text's record encodes as % x", i, got, want)
			}
		}
		fmt.Printf("bulletformat: %d records, each the text's\n", n)
	}
	seen := make(map[string]int, len(text))
	for i, r := range text {
		k := key(r.FEN)
		if j, ok := seen[k]; ok && !dups {
			return fmt.Errorf("records %d and %d are the same position %s", j, i, k)
		}
		seen[k] = i
	}
	fmt.Println("duplicates: none" + map[bool]string{true: " checked (kept by the dataset)", false: ""}[dups])
	if pgnPath != "" {
		games, err := matchPGN(pgnPath, text)
		if err != nil {
			return err
		}
		fmt.Printf("pgn: %d games; every record is a scored position of them, in order, with its game's result\n", games)
	}
	if sf != "" {
		if err := stockfishLegal(sf, text); err != nil {
			return err
		}
		fmt.Printf("stockfish: %d FENs legal (echoed back by d, legal moves found by go perft 1)\n", len(text))
	}
	return nil
}

// candidate is a scored position of a PGN game.
type candidate struct {
	key    string
	score  int
	result datagen.Result
}

// matchPGN walks the text records as a subsequence of the PGN's scored
// positions.
func matchPGN(path string, text []datagen.Record) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	games := strings.Split(string(data), "[Event ")
	next, count := 0, 0
	for gi, g := range games {
		if strings.TrimSpace(g) == "" {
			continue
		}
		count++
		cands, err := scored(g)
		if err != nil {
			return 0, fmt.Errorf("%s: game %d: %v", path, gi, err)
		}
		for _, c := range cands {
			if next < len(text) && key(text[next].FEN) == c.key {
				r := text[next]
				if r.Result != c.result || r.Score != c.score {
					return 0, fmt.Errorf("record %d (%s): result %v score %d, its game %d says %v and %d", next, c.key, r.Result, r.Score, gi, c.result, c.score)
				}
				next++
			}
		}
	}
	if next != len(text) {
		return 0, fmt.Errorf("%s: record %d (%s) is no scored position of the games at its place", path, next, text[next].FEN)
	}
	return count, nil
}

// scored replays one PGN game (as datagen.AppendPGN writes it) and returns
// the position before each scored move, with the score from White's view.
func scored(g string) ([]candidate, error) {
	var result datagen.Result
	switch {
	case strings.Contains(g, `[Result "1-0"]`):
		result = datagen.WhiteWins
	case strings.Contains(g, `[Result "0-1"]`):
		result = datagen.BlackWins
	case strings.Contains(g, `[Result "1/2-1/2"]`):
		result = datagen.Draw
	default:
		return nil, fmt.Errorf("no result")
	}
	pos := engine.StartPosition()
	if i := strings.Index(g, `[FEN "`); i >= 0 {
		end := strings.Index(g[i+6:], `"`)
		p, err := engine.ParseFEN(g[i+6 : i+6+end])
		if err != nil {
			return nil, err
		}
		pos = p
	}
	body := g
	if i := strings.LastIndex(g, "]\n"); i >= 0 {
		body = g[i+2:]
	}
	var out []candidate
	var last *engine.Position
	var lastFEN string
	toks := tokens(body)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case strings.HasPrefix(t, "{"):
			c := strings.Trim(t, "{}")
			if c == "book" || last == nil {
				continue
			}
			s, _, _ := strings.Cut(c, "/")
			cp, err := parseScore(s)
			if err != nil {
				return nil, fmt.Errorf("comment %q: %v", c, err)
			}
			if last.SideToMove() == engine.Black {
				cp = -cp
			}
			out = append(out, candidate{key: key(lastFEN), score: cp, result: result})
			last = nil
		case t == "1-0" || t == "0-1" || t == "1/2-1/2" || t == "*" || strings.HasSuffix(t, "."):
		default:
			before := pos
			m, err := pos.ParseSAN(t)
			if err != nil {
				return nil, fmt.Errorf("move %q: %v", t, err)
			}
			lastFEN = before.FEN()
			last = &before
			pos.MakeMove(m)
		}
	}
	return out, nil
}

// parseScore reads "+0.35", "-1.20" or "+M3"/"-M3" as datagen scores them.
func parseScore(s string) (int, error) {
	if m, ok := strings.CutPrefix(strings.TrimLeft(s, "+-"), "M"); ok {
		n, err := strconv.Atoi(m)
		if err != nil {
			return 0, err
		}
		v := datagen.MateScore - n
		if strings.HasPrefix(s, "-") {
			v = -v
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if f < 0 {
		return int(f*100 - 0.5), nil
	}
	return int(f*100 + 0.5), nil
}

// tokens splits movetext into moves, move numbers, comments and the result.
func tokens(s string) []string {
	var out []string
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \n\r\t")
		if s == "" {
			break
		}
		if s[0] == '{' {
			end := strings.IndexByte(s, '}')
			if end < 0 {
				end = len(s) - 1
			}
			out = append(out, s[:end+1])
			s = s[end+1:]
			continue
		}
		end := strings.IndexAny(s, " \n\r\t{")
		if end < 0 {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// stockfishLegal feeds every FEN to one Stockfish process.
func stockfishLegal(bin string, recs []datagen.Record) error {
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill()
	// One position at a time: Stockfish runs `go` on a thread of its own,
	// so the next command's output could overtake the count otherwise.
	sc := bufio.NewScanner(outp)
	for i, r := range recs {
		if _, err := fmt.Fprintf(in, "position fen %s\nd\ngo perft 1\n", r.FEN); err != nil {
			return fmt.Errorf("stockfish: %v", err)
		}
		echoed := false
		for sc.Scan() {
			line := sc.Text()
			if fen, ok := strings.CutPrefix(line, "Fen: "); ok {
				if key(fen) != key(r.FEN) {
					return fmt.Errorf("record %d: stockfish reads %q as %q", i, r.FEN, fen)
				}
				echoed = true
			}
			if nodes, ok := strings.CutPrefix(line, "Nodes searched: "); ok {
				if nodes == "0" || !echoed {
					return fmt.Errorf("record %d: %s: stockfish finds no legal move or did not read it", i, r.FEN)
				}
				break
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("stockfish at record %d: %v", i, err)
		}
	}
	fmt.Fprintln(in, "quit")
	in.Close()
	io.Copy(io.Discard, outp)
	return nil
}
