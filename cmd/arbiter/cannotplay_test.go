package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// execArbiter runs this test binary as the arbiter command (see
// TestHelperArbiterMain) and returns its output and exit status.
func execArbiter(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperArbiterMain$", "--"}, args...)...)
	cmd.Env = append(append(os.Environ(), "ARBITER_TEST_MAIN=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func needEngines(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s not installed (apt-get install fairymax phalanx toga2)", p)
		}
	}
}

// A match an engine cannot play ends before its first game with a
// non-zero exit naming the engine and the reason, instead of a report made
// of forfeits (issue 32: Fair-Max with an EPD book "completed" with every
// game abandoned, exit 0). Real engine processes; the reasons come from
// what each engine announced (xboard features, UCI options).
func TestMatchEngineCannotPlay(t *testing.T) {
	needEngines(t, "/usr/games/fairymax", "/usr/games/phalanx", "/usr/games/toga2")
	frc := "file=../../match/testdata/frc4.epd"
	cases := []struct {
		name   string
		args   []string
		engine string
		reason string
	}{
		{"fairymax with an EPD book",
			[]string{"--engine", "name=fm,cmd=/usr/games/fairymax,proto=xboard", "--engine", "name=b,builtin", "--each", "tc=1+0.01",
				"--openings", "file=../../books/uho-200.epd"},
			`engine "fm"`, "no setboard"},
		{"phalanx with Chess960 openings",
			[]string{"--engine", "name=ph,cmd=/usr/games/phalanx,args=-b- -l-,proto=xboard", "--engine", "name=b,builtin", "--each", "tc=1+0.01",
				"--openings", frc},
			`engine "ph"`, "no fischerandom variant"},
		{"phalanx at fixed nodes",
			[]string{"--engine", "name=ph,cmd=/usr/games/phalanx,args=-b- -l-,proto=xboard", "--engine", "name=b,builtin", "--each", "nodes=1000",
				"--openings", "file=../../books/8moves-200.pgn"},
			`engine "ph"`, "cannot search a fixed number of nodes"},
		{"toga2 with Chess960 openings",
			[]string{"--engine", "name=toga,cmd=/usr/games/toga2", "--engine", "name=b,builtin", "--each", "nodes=1000",
				"--openings", frc},
			`engine "toga"`, "no UCI_Chess960 option"},
		{"toga2 with an option it does not have",
			[]string{"--engine", "name=toga,cmd=/usr/games/toga2,option.Contempt=10", "--engine", "name=b,builtin", "--each", "nodes=1000",
				"--openings", "file=../../books/8moves-200.pgn"},
			"toga", `option "Contempt": the engine has no such option`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"match", "--games", "4", "--pgnout", filepath.Join(t.TempDir(), "g.pgn")}, c.args...)
			stdout, stderr, code := execArbiter(t, nil, args...)
			if code == 0 || !strings.Contains(stderr, c.engine) || !strings.Contains(stderr, c.reason) {
				t.Fatalf("exit %d, want non-zero naming %s and %q\nstdout:\n%s\nstderr:\n%s", code, c.engine, c.reason, stdout, stderr)
			}
			if strings.Contains(stdout, "Finished game") {
				t.Errorf("games were played:\n%s", stdout)
			}
			t.Logf("exit %d: %s", code, strings.TrimSpace(stderr))
		})
	}
}

// On the cluster the same check makes every worker refuse the test, and
// the test ends failed with the reason: arbiter up exits 1 naming it.
func TestUpEngineCannotPlay(t *testing.T) {
	needEngines(t, "/usr/games/fairymax")
	stdout, stderr, code := execArbiter(t, nil, "up", "--temp", "--workers", "1", "--http", "", "--listen", "127.0.0.1:0", "--start-timeout", "3s",
		"--engine", "name=fm,cmd=/usr/games/fairymax,proto=xboard", "--engine", "name=b,builtin", "--each", "tc=1+0.01",
		"--openings", "file=../../books/uho-200.epd", "--games", "4")
	if code != 1 || !strings.Contains(stderr, `engine "fm" cannot play this match`) || !strings.Contains(stderr, "no setboard") {
		t.Fatalf("exit %d, want 1 naming fm and setboard\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "State:      failed") {
		t.Errorf("the test did not end failed:\n%s", stdout)
	}
}

// An engine whose games keep ending abandoned (here it crashes at its
// first move of every game and --recover restarts it) stops the match
// with a failure after a few games, naming the engine and why, rather
// than counting forfeits to the end.
func TestMatchStopsOnAbandonedGames(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "badengine")
	if out, err := exec.Command("go", "build", "-o", bad, "github.com/arbiter-chess/arbiter/testing/testengines/badengine").CombinedOutput(); err != nil {
		t.Fatalf("building badengine: %v\n%s", err, out)
	}
	stdout, stderr, code := execArbiter(t, nil, "match", "--recover", "--games", "40", "--pgnout", filepath.Join(t.TempDir(), "g.pgn"),
		"--engine", "name=crashy,cmd="+bad+",args=-mode crash -at 1", "--engine", "name=b,builtin", "--each", "nodes=500",
		"--openings", "file=../../books/8moves-200.pgn")
	if code != 1 || !strings.Contains(stderr, "games abandoned") || !strings.Contains(stderr, `engine "crashy"`) {
		t.Fatalf("exit %d, want 1 with the abandoned games and the engine\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout, "Finished game"); n > 6 {
		t.Errorf("%d games played before stopping", n)
	}
	if !strings.Contains(stdout, "abandoned 3") && !strings.Contains(stdout, "abandoned 4") {
		t.Errorf("the summary does not count the abandoned games:\n%s", stdout)
	}
	if strings.Contains(stdout, "give --recover") {
		t.Errorf("the summary suggests --recover, which is on:\n%s", stdout)
	}
	if !strings.Contains(stdout, "Elo: not estimable, nElo: not estimable (score 0 %: every game lost)") {
		t.Errorf("the report prints figures of a 0 %% score:\n%s", stdout)
	}
}
