package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/datagen"
)

// runMain runs this test binary as arbiter (TestHelperArbiterMain): main's
// exit status, stdout and stderr.
func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperArbiterMain$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		code = xe.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestDatagenCommand: the command writes exactly --positions records, the
// same file whatever --concurrency, and the binary format holds the same
// records as the text.
func TestDatagenCommand(t *testing.T) {
	dir := t.TempDir()
	gen := func(name, format, conc string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		stdout, stderr, code := runMain(t, "datagen", "--engine", "name=dev,builtin", "--each", "nodes=300,option.Hash=4",
			"--positions", "301", "--random-seed", "5", "--batch-games", "2", "--concurrency", conc, "--format", format, "--out", out, "--quiet")
		if code != 0 {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "positions   301 ("+format) || !strings.Contains(stdout, "games ") || !strings.Contains(stdout, "duplicates ") {
			t.Fatalf("summary:\n%s", stdout)
		}
		t.Logf("%s:\n%s", name, stdout)
		return out
	}
	a := gen("a.txt", "text", "2")
	b := gen("b.txt", "text", "1")
	ta, _ := os.ReadFile(a)
	tb, _ := os.ReadFile(b)
	if !bytes.Equal(ta, tb) {
		t.Fatal("--concurrency 2 and 1 wrote different datasets")
	}
	var recs []datagen.Record
	sc := bufio.NewScanner(bytes.NewReader(ta))
	for sc.Scan() {
		r, err := datagen.ParseText(sc.Text())
		if err != nil {
			t.Fatalf("line %d: %v", len(recs)+1, err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 301 {
		t.Fatalf("%d records, want 301", len(recs))
	}
	bin, _ := os.ReadFile(gen("c.bin", "bulletformat", "2"))
	var want []byte
	for _, r := range recs {
		want, _ = datagen.AppendBullet(want, r)
	}
	if !bytes.Equal(bin, want) {
		t.Fatalf("bulletformat: %d bytes, not the text's %d records", len(bin), len(recs))
	}
	// viriformat: the same 301 positions, read back by the reader written
	// from the format's definition.
	i := 0
	err := datagen.ReadViriFile(gen("e.vf", "viriformat", "2"), func(g datagen.ViriGame) error {
		for _, p := range g.Positions {
			if i >= len(recs) || p.FEN != recs[i].FEN || p.Score != recs[i].Score || g.Result != recs[i].Result {
				return fmt.Errorf("viriformat position %d: %+v %s, not the text's record", i, p, g.Result)
			}
			i++
		}
		return nil
	})
	if err != nil || i != len(recs) {
		t.Fatalf("viriformat: %v after %d of %d records", err, i, len(recs))
	}
	pgn, _ := os.ReadFile(gen("d.pgn", "pgn", "2"))
	if !strings.Contains(string(pgn), `[White "dev"]`) || !strings.Contains(string(pgn), "{book}") {
		t.Fatalf("pgn:\n%.400s", pgn)
	}
	if _, err := os.Stat(a + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("the partial file stays: %v", err)
	}
}

// TestDatagenBadInput: every bad flag is refused with exit status 2 and a
// message that names it, before an engine starts.
func TestDatagenBadInput(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.txt")
	os.WriteFile(exists, []byte("x"), 0o644)
	good := map[string]string{"--engine": "name=dev,builtin", "--each": "nodes=100", "--positions": "10", "--out": filepath.Join(dir, "out.txt")}
	cases := []struct {
		flag, value, want string
	}{
		{"--format", "csv", `--format: format "csv": unknown (want text|bulletformat|viriformat|pgn)`},
		{"--positions", "0", "--positions 0: must be > 0"},
		{"--each", "nodes=0", `--each: engine spec "nodes=0": nodes="0": want a positive integer`},
		{"--each", "tc=10+0.1", "--each: tc=: datagen plays at fixed nodes only"},
		{"--each", "option.Hash=4", "nodes=N is required"},
		{"--engine", "name=dev,builtin,depth=3", "--engine: depth=: datagen plays at fixed nodes only"},
		{"--engine", "", "--engine is required"},
		{"--out", "", "--out is required"},
		{"--out", exists, "exists.txt: the file exists"},
		{"--random-plies", "9-8", `--random-plies "9-8": want MIN-MAX or N`},
		{"--random-plies", "0", "random-plies: 0-0 without openings"},
		{"--adjudicate", "resign=3", `--adjudicate: unknown key "resign"`},
		{"--adjudicate", "max-moves=0", "adjudicate max-moves: 0"},
		{"--filters", "captures", `--filters: unknown filter "captures"`},
		{"--openings", "file=" + filepath.Join(dir, "none.epd"), "--openings: openings"},
		{"--concurrency", "0", "--concurrency 0: must be between 1 and 1024"},
		{"--duplicates", "maybe", `--duplicates "maybe": want keep or drop`},
		{"--engine", "name=x,cmd=" + filepath.Join(dir, "no-such-engine"), "--engine: "},
	}
	for _, c := range cases {
		args := []string{"datagen"}
		for k, v := range good {
			if k != c.flag {
				args = append(args, k, v)
			}
		}
		if c.value != "" {
			args = append(args, c.flag, c.value)
		}
		_, stderr, code := runMain(t, args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %q: exit %d, stderr %q; want 2 and %q", c.flag, c.value, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(good["--out"]); !os.IsNotExist(err) {
		t.Fatal("bad input wrote the output file")
	}
}
