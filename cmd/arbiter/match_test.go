package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runMatchCmd runs `arbiter match ARGS` in-process.
func runMatchCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"match"}, args...))
	err := root.Execute()
	return out.String(), err
}

const matchSF = "/usr/games/stockfish"

func needSF(t *testing.T) {
	if _, err := os.Stat(matchSF); err != nil {
		t.Skip("stockfish not installed (apt-get install stockfish)")
	}
}

func TestMatchRejectsBadInput(t *testing.T) {
	needSF(t)
	book := "file=../../books/uho-200.epd"
	eng := func(name string, extra string) string { return "name=" + name + ",cmd=" + matchSF + extra }
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"one engine", []string{"--engine", eng("a", ""), "--each", "nodes=10", "--openings", book, "--games", "2"}, "at least two engines"},
		{"unknown engine key", []string{"--engine", eng("a", ",colour=red"), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--games", "2"}, `unknown key "colour"`},
		{"missing binary", []string{"--engine", "name=a,cmd=/no/such/engine", "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--games", "2"}, "/no/such/engine"},
		{"bad tc", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--each", "tc=10+x", "--openings", book, "--games", "2"}, `tc="10+x"`},
		{"no limit", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--openings", book, "--games", "2"}, "no limit"},
		{"unknown each key", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--each", "nodez=10", "--openings", book, "--games", "2"}, `unknown key "nodez"`},
		{"unreadable book", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", "file=/no/book.epd", "--games", "2"}, "/no/book.epd"},
		{"bad book line", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", "file=testdata/bad.epd", "--games", "2"}, "bad.epd:2"},
		{"odd games", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--games", "3"}, "odd"},
		{"sprt key", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--sprt", "elo0=0,elo2=1"}, `unknown key "elo2"`},
		{"sprt bounds", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--sprt", "elo0=2,elo1=0"}, "elo0"},
		{"same names", []string{"--engine", eng("a", ""), "--engine", eng("a", ""), "--each", "nodes=10", "--openings", book, "--games", "2"}, "both engines"},
		{"bad option", []string{"--engine", eng("a", ",option.Hashh=16"), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--games", "2"}, `option "Hashh"`},
		{"option range", []string{"--engine", eng("a", ",option.Skill Level=99"), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--games", "2"}, "out of range"},
		{"resign", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--games", "2", "--resign", "movecount=3"}, "score="},
		{"unclosed quote", []string{"--engine", eng("a", `,args="-x`), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--games", "2"}, "not closed"},
		{"name twice", []string{"--engine", eng("a", ",name=c"), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--games", "2"}, "name= given twice"},
		{"each engine key", []string{"--engine", eng("a", ""), "--engine", eng("b", ""), "--each", "nodes=10,cmd=x", "--openings", book, "--games", "2"}, "cmd= belongs to one engine"},
		{"builtin and cmd", []string{"--engine", eng("a", ",builtin"), "--engine", eng("b", ""), "--each", "nodes=10", "--openings", book, "--games", "2"}, "exclude each other"},
		// As submit refuses it: beside the net the weight changes nothing.
		{"weight beside the net", []string{"--engine", "name=a,builtin,option.KnightValueMG=250", "--engine", "name=b,builtin", "--each", "nodes=10", "--openings", book, "--games", "2"}, `option "KnightValueMG" is a weight of the hand-written evaluation, which the engine uses only with UseNNUE=false`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := runMatchCmd(t, c.args...)
			if carriedCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v (out %q), want a usage error mentioning %s", err, out, c.want)
			}
		})
	}
}

func pgnExtractOK(t *testing.T, file string, games int) {
	t.Helper()
	px := ""
	for _, p := range []string{"/usr/games/pgn-extract", "/usr/bin/pgn-extract"} {
		if _, err := os.Stat(p); err == nil {
			px = p
		}
	}
	if px == "" {
		t.Log("pgn-extract not installed: PGN not checked")
		return
	}
	kept := filepath.Join(t.TempDir(), "kept.pgn")
	out, err := exec.Command(px, "-s", "-r", "-o", kept, file).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("pgn-extract: %v\n%s", err, out)
	}
	if out, err = exec.Command(px, "-s", "-o", kept, file).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("pgn-extract: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(kept)
	if n := bytes.Count(b, []byte("[Event ")); n != games {
		t.Fatalf("pgn-extract kept %d games, want %d", n, games)
	}
}

// A local SPRT between two Skill Levels of Stockfish: it must stop on the
// upper bound with exit status 0, print the fastchess-style report, and
// write every game.
func TestMatchSPRTStockfishSkill(t *testing.T) {
	needSF(t)
	pgn := filepath.Join(t.TempDir(), "sprt.pgn")
	out, err := runMatchCmd(t,
		"--engine", "name=skill8,cmd="+matchSF+",option.Skill Level=8,option.Hash=8",
		"--engine", "name=skill0,cmd="+matchSF+",option.Skill Level=0,option.Hash=8",
		"--each", "nodes=2000", "--openings", "file=../../books/8moves-200.pgn,order=random,seed=5",
		"--sprt", "elo0=0,elo1=200,alpha=0.1,beta=0.1,model=logistic", "--games", "60", "--concurrency", "2", "--pgnout", pgn,
		"--maxmoves", "120", "--ratinginterval", "4", "--quiet")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"Results of skill8 vs skill0", "Elo:", "nElo:", "LOS:", "Ptnml(0-2):", "LLR:", "SPRT: H1 was accepted", "Runner CPU"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	games := strings.Count(out, "Games: ") // last report's count is what was written
	_ = games
	b, _ := os.ReadFile(pgn)
	n := bytes.Count(b, []byte("[Event "))
	if n == 0 || n%2 != 0 {
		t.Fatalf("%d games in the PGN", n)
	}
	pgnExtractOK(t, pgn, n)
}

// xboard engines through the CLI: Fairy-Max (no setboard) with a PGN book,
// against Phalanx with its book and learning off.
func TestMatchXboardCLI(t *testing.T) {
	for _, p := range []string{"/usr/games/fairymax", "/usr/games/phalanx"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s not installed (apt-get install fairymax phalanx)", p)
		}
	}
	pgn := filepath.Join(t.TempDir(), "x.pgn")
	out, err := runMatchCmd(t,
		"--engine", "name=fairymax,cmd=/usr/games/fairymax,proto=xboard,depth=3",
		"--engine", "name=phalanx,cmd=/usr/games/phalanx,args=-b- -l-,proto=xboard,movetime=30",
		"--openings", "file=../../books/8moves-200.pgn,plies=8", "--games", "2", "--timemargin", "300",
		"--maxmoves", "50", "--pgnout", pgn)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "incident") {
		t.Errorf("incidents:\n%s", out)
	}
	pgnExtractOK(t, pgn, 2)
}
