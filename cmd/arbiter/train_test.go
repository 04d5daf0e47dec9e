package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// TestTrainCommand: `arbiter train` writes a net that `arbiter bench --nnue`
// plays with; a malformed line is refused by file and line.
func TestTrainCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.txt")
	var b strings.Builder
	p := engine.StartPosition()
	for i := 0; i < 200; i++ {
		var ml engine.MoveList
		p.GenerateMoves(&ml)
		if ml.N == 0 || p.HalfmoveClock() > 80 {
			p = engine.StartPosition()
			continue
		}
		p.MakeMove(ml.Moves[(i*7)%ml.N])
		fmt.Fprintf(&b, "%s | %d | 0.5\n", p.FEN(), (i%9)*10-40)
	}
	os.WriteFile(data, []byte(b.String()), 0o644)
	net := filepath.Join(dir, "net.nnue")
	out, _, err := runArbiter(t, "", "train", "--data", data, "--out", net, "--epochs", "2", "--batch", "64",
		"--checkpoints", filepath.Join(dir, "ck"), "--threads", "2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"epoch 1/2", "val loss", "epoch 2/2", "wrote " + net} {
		if !strings.Contains(out, want) {
			t.Errorf("train output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runArbiter(t, "", "train", "--data", data, "--out", net, "--epochs", "3", "--batch", "64",
		"--resume", filepath.Join(dir, "ck", "epoch-2.ckpt"))
	if err != nil || !strings.Contains(out, "from epoch 3") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	out, _, err = runArbiter(t, "", "bench", "--nnue", "--evalfile", net, "--depth", "3")
	if err != nil || !strings.Contains(out, "classic") || !strings.Contains(out, "nnue/classic nodes/s") {
		t.Fatalf("bench --nnue: %v\n%s", err, out)
	}

	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte(strings.SplitAfterN(b.String(), "\n", 3)[0]+"8/8/8 w - - | 1 | 0.5\n"), 0o644)
	if _, _, err := runArbiter(t, "", "train", "--data", bad, "--out", net); err == nil || !strings.Contains(err.Error(), bad+":2: FEN") {
		t.Fatalf("malformed line: %v", err)
	}
	if _, _, err := runArbiter(t, "", "bench", "--nnue", "--evalfile", data, "--depth", "1"); err == nil || !strings.Contains(err.Error(), "EvalFile") {
		t.Fatalf("a text file as EvalFile: %v", err)
	}
}

// train reads bullet's text format only, says so in its help, and refuses
// a binary file (a bulletformat record here) naming it and the way to get
// text; the control is TestTrainCommand, which trains on text.
func TestTrainRefusesBinaryData(t *testing.T) {
	help, _, err := runArbiter(t, "", "train", "--help")
	if err != nil || !strings.Contains(help, "text format only") {
		t.Errorf("train --help does not say it reads the text format only: %v\n%s", err, help)
	}
	bin := filepath.Join(t.TempDir(), "data.bin")
	record := append([]byte{0xff, 0xff, 0, 0, 0, 0, 0, 0}, make([]byte, 24)...)
	if err := os.WriteFile(bin, bytes.Repeat(record, 4), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runArbiter(t, "", "train", "--data", bin, "--out", filepath.Join(t.TempDir(), "net.nnue"))
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--data "+bin+": binary") || !strings.Contains(err.Error(), "--format text") {
		t.Errorf("train on a binary file: exit %d, %v", exitCode(err), err)
	}
}
