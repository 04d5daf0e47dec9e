package syzygy

// Differential test against Fathom (Debian package fathom), an independent
// C prober run as a process, one FEN per run in a bounded pool: random
// legal positions spread evenly over every table in the directory (colours
// swapped at random so both orientations of each file are looked up, both
// sides to move, en-passant positions wherever both sides have pawns), and
// for each the WDL and DTZ compared with Fathom's.
//
//	default              3,000 positions (well under a minute on two cores)
//	ARBITER_TB_FULL=1    100,000 positions
//	ARBITER_TB_POSITIONS=N  N positions
//
// Tables: ARBITER_SYZYGY_PATH, else ../shared/data/syzygy from the project
// root. Fathom: ARBITER_FATHOM, else /usr/games/fathom. Skipped, with a
// message, only when either is absent.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy/syzygytest"
)

func sharedTablesDir(t testing.TB) string {
	t.Helper()
	return syzygytest.Dir(t, "KQvK.rtbw")
}

func fathomPath(t testing.TB) string {
	t.Helper()
	path := os.Getenv("ARBITER_FATHOM")
	if path == "" {
		path = "/usr/games/fathom"
	}
	if _, err := os.Stat(path); err != nil {
		syzygytest.SkipUnlessRequired(t, "fathom not found at %s (install the Debian package fathom, or set ARBITER_FATHOM): %v", path, err)
	}
	return path
}

// fathomResult is what Fathom prints for a root position.
type fathomResult struct {
	wdl string // Win, CursedWin, Draw, BlessedLoss, Loss
	dtz int    // absolute
	// moves holds the root moves in SAN by Fathom's class: "Winning",
	// "Drawing" (cursed wins and blessed losses included), "Losing".
	moves map[string][]string
}

var fathomTag = regexp.MustCompile(`(?m)^\[(WDL|DTZ|WinningMoves|DrawingMoves|LosingMoves) "([^"]*)"\]$`)

func runFathom(ctx context.Context, path, dir, fen string) (fathomResult, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--path="+dir, fen)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return fathomResult{}, fmt.Errorf("fathom %q: %v: %s", fen, err, errOut.String())
	}
	r := fathomResult{moves: map[string][]string{}}
	found := 0
	for _, m := range fathomTag.FindAllStringSubmatch(out.String(), -1) {
		found++
		switch m[1] {
		case "WDL":
			r.wdl = m[2]
		case "DTZ":
			n, err := strconv.Atoi(m[2])
			if err != nil {
				return r, fmt.Errorf("fathom %q: DTZ %q", fen, m[2])
			}
			r.dtz = n
		default:
			class := strings.TrimSuffix(m[1], "Moves")
			r.moves[class] = []string{}
			for _, san := range strings.Split(m[2], ", ") {
				if san != "" {
					r.moves[class] = append(r.moves[class], sanKey(san))
				}
			}
			slices.Sort(r.moves[class])
		}
	}
	if found != 5 {
		return r, fmt.Errorf("fathom %q: no WDL/DTZ tags in %q", fen, out.String())
	}
	return r, nil
}

var fathomWDLName = map[WDL]string{Loss: "Loss", BlessedLoss: "BlessedLoss", Draw: "Draw", CursedWin: "CursedWin", Win: "Win"}

// tableMaterials lists the material of every table in dir, sorted by name.
func tableMaterials(t testing.TB, tb *Tablebase) []*tableEntry {
	var list []*tableEntry
	for _, e := range tb.entries {
		if !slices.Contains(list, e) {
			list = append(list, e)
		}
	}
	slices.SortFunc(list, func(a, b *tableEntry) int { return strings.Compare(a.name, b.name) })
	if len(list) == 0 {
		t.Fatal("no tables")
	}
	return list
}

// randomPosition draws a legal position of material m (colours swapped
// when swap), side to move at random; withEP asks for an en-passant
// capture to be possible when both sides have pawns.
func randomPosition(rng *rand.Rand, m material, swap, withEP bool) engine.Position {
	if swap {
		m = m.mirrored()
	}
	for {
		var board [64]engine.Piece
		side := engine.Color(rng.IntN(2))
		ep := "-"
		if withEP && m[0][engine.Pawn] > 0 && m[1][engine.Pawn] > 0 {
			// The side not to move has just pushed a pawn two squares
			// next to a pawn of the side to move.
			file := rng.IntN(8)
			adj := file - 1
			if file == 0 || (file < 7 && rng.IntN(2) == 0) {
				adj = file + 1
			}
			rank, epRank := 3, 2 // White pushed: pawn on rank 4, skipped rank 3
			if side == engine.White {
				rank, epRank = 4, 5
			}
			board[engine.MakeSquare(file, rank)] = engine.MakePiece(side.Other(), engine.Pawn)
			board[engine.MakeSquare(adj, rank)] = engine.MakePiece(side, engine.Pawn)
			ep = engine.MakeSquare(file, epRank).String()
		}
		ok := true
		for c := engine.White; c <= engine.Black && ok; c++ {
			for pt := engine.Pawn; pt <= engine.King; pt++ {
				n := m[c][pt]
				if pt == engine.King {
					n = 1
				}
				for range n - countOn(&board, engine.MakePiece(c, pt)) {
					sq := randomEmpty(rng, &board, pt == engine.Pawn)
					board[sq] = engine.MakePiece(c, pt)
				}
			}
		}
		fen := boardFEN(&board, side, ep)
		if pos, err := engine.ParseFEN(fen); err == nil {
			return pos
		}
	}
}

func countOn(board *[64]engine.Piece, pc engine.Piece) int {
	n := 0
	for _, x := range board {
		if x == pc {
			n++
		}
	}
	return n
}

func randomEmpty(rng *rand.Rand, board *[64]engine.Piece, pawn bool) engine.Square {
	for {
		sq := engine.Square(rng.IntN(64))
		if pawn && (sq.Rank() == 0 || sq.Rank() == 7) {
			continue
		}
		if board[sq] == engine.NoPiece {
			return sq
		}
	}
}

// emptyRuns turns runs of empty squares ('1' each) into FEN digits.
var emptyRuns = strings.NewReplacer("11111111", "8", "1111111", "7", "111111", "6", "11111", "5", "1111", "4", "111", "3", "11", "2")

func boardFEN(board *[64]engine.Piece, side engine.Color, ep string) string {
	rows := make([]string, 8)
	for sq, pc := range board {
		letter := "1"
		if pc != engine.NoPiece {
			letter = string(pc.Letter())
		}
		rows[7-sq/8] += letter
	}
	for i := range rows {
		rows[i] = emptyRuns.Replace(rows[i])
	}
	return fmt.Sprintf("%s %c - %s 0 1", strings.Join(rows, "/"), "wb"[side], ep)
}

// sanKey reduces a SAN move to piece, destination and promotion: Fathom
// disambiguates SAN its own way (Q2a2 for Qba2), and with the legal moves
// of one position these three still tell moves apart up to which of two
// like pieces moves.
func sanKey(san string) string {
	san = strings.TrimRight(san, "+#")
	promo := ""
	if i := strings.IndexByte(san, '='); i >= 0 {
		san, promo = san[:i], san[i:]
	}
	piece := "P"
	if strings.ContainsRune("KQRBN", rune(san[0])) {
		piece = san[:1]
	}
	if len(san) < 2 {
		return "?" + san
	}
	return piece + san[len(san)-2:] + promo
}

// rootMoveClasses sorts pos's root moves into Fathom's classes, each move
// as its sanKey.
func rootMoveClasses(tb *Tablebase, pos *engine.Position) (map[string][]string, error) {
	moves, err := tb.RootMoves(pos)
	if err != nil {
		return nil, err
	}
	classes := map[string][]string{"Winning": {}, "Drawing": {}, "Losing": {}}
	for _, m := range moves {
		class := "Drawing"
		switch m.WDL {
		case Win:
			class = "Winning"
		case Loss:
			class = "Losing"
		}
		classes[class] = append(classes[class], sanKey(pos.SAN(m.Move)))
	}
	for _, list := range classes {
		slices.Sort(list)
	}
	return classes, nil
}

func envCount(t *testing.T, def int) int {
	if os.Getenv("ARBITER_TB_FULL") == "1" {
		def = 100_000
	}
	if s := os.Getenv("ARBITER_TB_POSITIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("ARBITER_TB_POSITIONS=%q is not a positive number", s)
		}
		def = n
	}
	return def
}

// The outcomes of checking one position.
const (
	comparedWithFathom = iota
	checkedMate        // a checkmate, for which Fathom's root probe gives no value
	notCompared        // the run was cancelled
)

// checkAgainstFathom probes pos (WDL, DTZ, root moves) and compares with
// Fathom; problem describes a difference or an error.
func checkAgainstFathom(ctx context.Context, tb *Tablebase, fathom, dir string, pos *engine.Position) (WDL, int, string) {
	fen := pos.FEN()
	wdl, err := tb.ProbeWDL(pos)
	if err != nil {
		return 0, 0, "ProbeWDL: " + err.Error()
	}
	dtz, err := tb.ProbeDTZ(pos)
	if err != nil {
		return 0, 0, "ProbeDTZ: " + err.Error()
	}
	if pos.IsCheckmate() {
		// Fathom reports a mate as TB_RESULT_CHECKMATE, not a value; the
		// tables say lost.
		if wdl != Loss || dtz != -1 {
			return 0, 0, fmt.Sprintf("checkmate probed as %v, DTZ %d (want loss, -1)", wdl, dtz)
		}
		return wdl, checkedMate, ""
	}
	want, err := runFathom(ctx, fathom, dir, fen)
	if err != nil {
		if ctx.Err() != nil {
			return 0, notCompared, ""
		}
		return 0, 0, err.Error()
	}
	if fathomWDLName[wdl] != want.wdl || max(dtz, -dtz) != want.dtz {
		return 0, 0, fmt.Sprintf("WDL %v DTZ %d, fathom WDL %s DTZ %d", wdl, dtz, want.wdl, want.dtz)
	}
	got, err := rootMoveClasses(tb, pos)
	if err != nil {
		return 0, 0, "RootMoves: " + err.Error()
	}
	if fmt.Sprint(got) != fmt.Sprint(want.moves) {
		return 0, 0, fmt.Sprintf("root moves %v, fathom %v", got, want.moves)
	}
	return wdl, comparedWithFathom, ""
}

// TestProbesMatchFathom compares WDL and DTZ with Fathom on random
// positions over every table.
func TestProbesMatchFathom(t *testing.T) {
	dir := sharedTablesDir(t)
	fathom := fathomPath(t)
	tb, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	total := envCount(t, 3000)
	entries := tableMaterials(t, tb)
	// Every file of the directory is a table Open took (none skipped as
	// misnamed).
	files, _ := filepath.Glob(filepath.Join(dir, "*.rtbw"))
	if wdl, dtz := tb.Counts(); len(entries) != len(files) || wdl != len(files) || dtz != len(files) {
		t.Fatalf("Open found %d tables (%d WDL, %d DTZ files); the directory has %d .rtbw files", len(entries), wdl, dtz, len(files))
	}
	rng := rand.New(rand.NewPCG(44, uint64(total)))
	type job struct {
		table string
		pos   engine.Position
	}
	jobs := make([]job, total)
	epCount := 0
	for i := range jobs {
		e := entries[i%len(entries)]
		withEP := rng.IntN(2) == 0
		pos := randomPosition(rng, e.mat, rng.IntN(2) == 0, withEP)
		if pos.EnPassant() != engine.NoSquare {
			epCount++
		}
		jobs[i] = job{e.name, pos}
	}

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	var (
		mu         sync.Mutex
		mismatches []string
		mates      int
		byValue    = map[WDL]int{}
		perTable   = map[string]int{}
		wg         sync.WaitGroup
		next       = make(chan job)
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		mismatches = append(mismatches, fmt.Sprintf(format, args...))
		if len(mismatches) >= 20 {
			cancel()
		}
	}
	for range runtime.NumCPU() + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				wdl, outcome, problem := checkAgainstFathom(ctx, tb, fathom, dir, &j.pos)
				if problem != "" {
					fail("%s (%s): %s", j.pos.FEN(), j.table, problem)
					continue
				}
				if outcome == checkedMate {
					mu.Lock()
					mates++
					mu.Unlock()
					continue
				}
				if outcome == notCompared {
					continue
				}
				mu.Lock()
				perTable[j.table]++
				byValue[wdl]++
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	for _, m := range mismatches {
		t.Error(m)
	}
	compared := 0
	for _, e := range entries {
		compared += perTable[e.name]
		if perTable[e.name] == 0 && len(mismatches) == 0 {
			t.Errorf("table %s: no position compared", e.name)
		}
	}
	if epCount == 0 {
		t.Error("no position with an en-passant right was drawn")
	}
	t.Logf("%d positions over %d tables (%d with en passant, %d checkmates checked without fathom), %d compared with fathom in %v; by WDL: %v",
		total, len(entries), epCount, mates, compared, time.Since(start).Round(time.Millisecond), byValue)
}
