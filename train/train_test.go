package train

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/nnue"
)

var pieceValue = [7]int{engine.Pawn: 100, engine.Knight: 300, engine.Bishop: 300, engine.Rook: 500, engine.Queen: 900}

// materialData writes n positions from random games, labelled with their
// material balance (White's point of view), in bullet's text format.
func materialData(t *testing.T, n int, seed uint64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for written := 0; written < n; {
		p := engine.StartPosition()
		plies := 10 + r.IntN(90)
		for ply := 0; ply < plies; ply++ {
			var ml engine.MoveList
			p.GenerateMoves(&ml)
			if ml.N == 0 {
				break
			}
			// prefer captures, so that material goes out of balance
			m := ml.Moves[r.IntN(ml.N)]
			for _, c := range ml.Moves[:ml.N] {
				if p.IsCapture(c) && r.IntN(2) == 0 {
					m = c
					break
				}
			}
			p.MakeMove(m)
			if ply < 8 || r.IntN(4) != 0 {
				continue
			}
			score := 0
			for s := engine.Square(0); s < 64; s++ {
				pc := p.PieceAt(s)
				if pc == engine.NoPiece {
					continue
				}
				if pc.Color() == engine.White {
					score += pieceValue[pc.Type()]
				} else {
					score -= pieceValue[pc.Type()]
				}
			}
			result := "0.5"
			if score > 200 {
				result = "1.0"
			} else if score < -200 {
				result = "0.0"
			}
			fmt.Fprintf(&b, "%s | %d | %s\n", p.FEN(), score, result)
			written++
		}
	}
	path := filepath.Join(t.TempDir(), "material.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func smallConfig() Config {
	c := DefaultConfig()
	c.Epochs, c.BatchSize, c.LR, c.LRFinal, c.WDL, c.Val, c.Seed = 6, 128, 0.01, 0.002, 0, 0.1, 3
	return c
}

// TestTrainLearnsMaterial: on positions labelled by material, the loss
// falls, and the trained net, quantised and loaded as the engine loads it,
// scores material imbalances with the right sign for either side to move.
func TestTrainLearnsMaterial(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a net")
	}
	data, err := ReadFiles([]string{materialData(t, 3000, 1)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := smallConfig()
	s := NewState(&cfg, data)
	tr, err := NewTrainer(cfg, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := tr.ValidationLoss(&s.Params)
	var last EpochResult
	for s.Epoch < cfg.Epochs {
		last = tr.Epoch(s)
		t.Logf("epoch %d: train %.5f val %.5f", last.Epoch, last.TrainLoss, last.ValLoss)
	}
	if !(last.ValLoss < before*0.5) {
		t.Fatalf("validation loss %.5f → %.5f: did not fall by half", before, last.ValLoss)
	}
	path := filepath.Join(t.TempDir(), "net.nnue")
	if err := SaveNet(path, &s.Params); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	net, err := nnue.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fen  string
		sign int // of the score from the side to move's point of view
	}{
		{"rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3", +1}, // White a queen up
		{"rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 3", -1},
		{"1nbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQk - 0 1", +1}, // Black a rook down
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKB2 b Qkq - 0 1", +1},  // White a rook and a knight down, Black to move
		{"4k3/8/8/8/8/8/PPPP4/4K3 w - - 0 1", +1},
		{"4k3/pppp4/8/8/8/8/8/4K3 w - - 0 1", -1},
	} {
		p, err := engine.ParseFEN(tc.fen)
		if err != nil {
			t.Fatal(err)
		}
		if v := net.EvaluatePosition(&p); v*tc.sign <= 50 {
			t.Errorf("%s: net says %d, want clearly %s", tc.fen, v, map[int]string{1: "positive", -1: "negative"}[tc.sign])
		}
	}
}

// TestTrainDeterministic: the same seed gives the same net whatever the
// thread count, and a run resumed from a checkpoint ends where an
// uninterrupted one does.
func TestTrainDeterministic(t *testing.T) {
	data, err := ReadFiles([]string{materialData(t, 600, 2)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := smallConfig()
	cfg.Epochs = 3
	dir := t.TempDir()
	run := func(threads int, name string) []byte {
		c := cfg
		c.Threads = threads
		path := filepath.Join(dir, name)
		if err := Run(c, data, NewState(&c, data), filepath.Join(dir, name+".ck"), path, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		return b
	}
	one, two := run(1, "one.nnue"), run(2, "two.nnue")
	if !bytes.Equal(one, two) {
		t.Fatal("1 and 2 threads trained different nets")
	}
	s, err := LoadCheckpoint(filepath.Join(dir, "two.nnue.ck", "epoch-1.ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	resumed := filepath.Join(dir, "resumed.nnue")
	var log bytes.Buffer
	if err := Run(cfg, data, s, "", resumed, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "from epoch 2") {
		t.Errorf("resumed run's log:\n%s", log.String())
	}
	if b, _ := os.ReadFile(resumed); !bytes.Equal(b, one) {
		t.Fatal("the run resumed after epoch 1 ended with another net than the uninterrupted run")
	}
	other := cfg
	other.Seed = 4
	if err := Run(other, data, s, "", resumed, &log); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Fatalf("resuming with another seed: %v", err)
	}
}

func TestReadFilesNamesBadLine(t *testing.T) {
	good := "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 25 | 0.5"
	for _, tc := range []struct{ line, want string }{
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 25", "want \"<FEN> | <score> | <result>\""},
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1 | 25 | 0.5", "FEN"},
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 2.5 | 0.5", "score \"2.5\""},
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 99999 | 0.5", "score \"99999\""},
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 25 | 1-0", "result \"1-0\""},
	} {
		path := filepath.Join(t.TempDir(), "data.txt")
		os.WriteFile(path, []byte(good+"\n\n"+good+"\n"+tc.line+"\n"+good+"\n"), 0o644)
		_, err := ReadFiles([]string{path})
		if err == nil || !strings.Contains(err.Error(), path+":4: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %s:4: … %s", tc.line, err, path, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "long.txt")
	os.WriteFile(path, []byte(good+"\n"+strings.Repeat("x", 1000)+"\n"), 0o644)
	if _, err := ReadFiles([]string{path}); err == nil || !strings.Contains(err.Error(), path+":2: ") {
		t.Errorf("over-long line: %v", err)
	}
	// White's point of view: Black to move with White winning is a loss for the side to move.
	s, err := ParseLine("4k3/8/8/8/8/8/8/3QK3 b - - 0 1 | 900 | 1.0")
	if err != nil || s.score != -900 || s.result != 0 || s.stm != engine.Black {
		t.Fatalf("black to move: %+v %v", s, err)
	}
}

func TestCheckpointRefusesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	net := filepath.Join(dir, "net.nnue")
	os.WriteFile(net, []byte("bulletbullet"), 0o644)
	if _, err := LoadCheckpoint(net); err == nil || !strings.Contains(err.Error(), "not an arbiter train checkpoint") {
		t.Fatalf("foreign file: %v", err)
	}
	ck := filepath.Join(dir, "a.ckpt")
	if err := SaveCheckpoint(ck, &State{Epoch: 2}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(ck)
	os.WriteFile(ck, b[:len(b)-10], 0o644)
	if _, err := LoadCheckpoint(ck); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated checkpoint: %v", err)
	}
}
