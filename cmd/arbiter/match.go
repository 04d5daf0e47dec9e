package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/base/buildinfo"
	"github.com/arbiter-chess/arbiter/base/schedbatch"
	"github.com/arbiter-chess/arbiter/client/testflags"
	"github.com/arbiter-chess/arbiter/local/fastchesscli"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
)

// matchFlags are `arbiter match`'s flags: the match (spec/matchplan)
// and how this run reports and keeps it.
type matchFlags struct {
	m          matchplan.Flags
	quiet      bool
	json       bool
	config     string
	resume     string
	state      string
	cpuProfile string
}

// sessionFlags may be given with --resume: they change how the rest of the
// match is played and reported, not which games it has.
var sessionFlags = map[string]bool{"resume": true, "quiet": true, "json": true, "concurrency": true, "ratinginterval": true, "cpuprofile": true}

func newMatchCommand() *cobra.Command {
	var f matchFlags
	cmd := &cobra.Command{
		Use:   "match",
		Short: "Play a local match, SPRT, round-robin or gauntlet between engines (game pairs, pentanomial statistics, ratings)",
		Long: `Play engines against each other on this machine. With two engines and --games N
(or --sprt): game pairs, every opening twice with colours swapped, fastchess's live
report, stopping on the SPRT bound. With more engines, or --tournament, --rounds:
a round-robin (everyone against everyone) or a gauntlet (the first --seeds engines
against the others), --rounds rounds in which every pairing plays --games games
(fastchess's and cutechess-cli's meaning), and a rating table (maximum likelihood,
95% intervals; pentanomial where games are paired).

  arbiter match --engine name=new,cmd=./sf --engine name=base,cmd=./sf,option.Hash=32 \
      --each tc=10+0.1 --openings file=books/8moves-200.pgn,order=random,seed=1 \
      --sprt elo0=0,elo1=2 --concurrency 2 --pgnout games.pgn

  arbiter match --engine "cmd=/usr/games/stockfish,option.Skill Level=5" \
      --engine "cmd=/usr/games/stockfish,option.Skill Level=10" --engine builtin \
      --each st=0.1 --tournament roundrobin --rounds 10 --games 2 --pgnout rr.pgn

The state (the config, every counted game, the next opening) is written as games
finish to --state (default: next to --pgnout, else in the temporary directory;
printed at the start). Ctrl-C stops after writing it (exit status 1);
--resume FILE plays exactly the games still missing.

--engine keys: name (default: the engine's own id name, made unique), cmd, args
(split at blanks), arg (one argument), dir, proto (uci|xboard), builtin,
option.NAME=VALUE, and any --each limit to override it for one engine. A value
with a comma is quoted: args="-x a,b".
--each keys: tc=[MOVES/]SEC[+INC] | tc=inf, st=SEC (per move, fractions allowed),
nodes=N, depth=D, movetime=MS, option.NAME=VALUE, proto.
--openings keys: file, format (epd|pgn), order (sequential|random), seed, plies,
start; without --openings every game starts from the initial position.
--config FILE: JSON with fastchess's field names (engines, type, rounds, games,
concurrency, opening, pgn, sprt, ...); flags given too override it.

fastchess's and cutechess-cli's own command lines work as they are, with their
output lines (Fishtest's and OpenBench's workers read them): single-dash options
(arbiter match -engine cmd=./sf name=new -engine cmd=./sf name=base -each
tc=10+0.1 -rounds 100 -repeat), or after --fastchess or --cutechess-cli, or as
arbiter fastchess ARGS, or with this binary called as fastchess or cutechess-cli
(a symlink). An option they have
and arbiter does not is refused by name.
See docs/match.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMatch(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.m.Engines, "engine", nil, "an engine (two or more): "+enginespec.Usage(enginespec.LocalMatch))
	fl.StringVar(&f.m.Each, "each", "", "settings for every engine: tc=10+0.1 | st=SEC | nodes=N | depth=D | movetime=MS [,option.X=V]")
	fl.StringVar(&f.m.Openings, "openings", "", "file=F[,format=epd|pgn][,order=random|sequential|fastchess][,seed=S][,plies=N][,start=N] (default: the initial position)")
	fl.IntVar(&f.m.Games, "games", 0, "two engines without --rounds: number of games (even: game pairs); else games per pairing and round (default 2)")
	fl.StringVar(&f.m.Tournament, "tournament", "", "roundrobin (default) or gauntlet")
	fl.IntVar(&f.m.Seeds, "seeds", 0, "gauntlet: how many of the first engines play all the others (default 1)")
	fl.IntVar(&f.m.Rounds, "rounds", 0, "rounds of a tournament: every pairing plays --games games a round")
	fl.IntVar(&f.m.Repeat, "repeat", 0, "games per opening (default: 2, game pairs with colours swapped, for an even --games; else 1)")
	fl.BoolVar(&f.m.Recover, "recover", true, "restart an engine that crashed or hung and go on (an incident); --recover=false stops the match, resumable")
	fl.StringVar(&f.m.SPRT, "sprt", "", "two engines: elo0=E0,elo1=E1[,alpha=0.05][,beta=0.05][,model=normalized|logistic|bayeselo]")
	fl.StringVar(&f.m.Stop, "stop", "", "two engines: "+matchplan.StopUsage)
	fl.IntVar(&f.m.Concurrency, "concurrency", 1, "games (game pairs) played at once")
	fl.StringVar(&f.m.PGNOut, "pgnout", "", "write every game to this PGN file (appended)")
	fl.StringVar(&f.m.Resign, "resign", "", "resign adjudication: movecount=N,score=CP")
	fl.StringVar(&f.m.Draw, "draw", "", "draw adjudication: movenumber=M,movecount=N,score=CP")
	fl.IntVar(&f.m.MaxMoves, "maxmoves", 0, "adjudicate a draw after this many moves (0 = off)")
	testflags.AddTB(fl, &f.m)
	fl.IntVar(&f.m.TimeMargin, "timemargin", 0, "milliseconds an engine may exceed its time without losing (overruns are recorded)")
	fl.IntVar(&f.m.HangTimeout, "hangtimeout", 30000, "milliseconds without a move under nodes/depth limits before an engine is declared hung")
	fl.StringVar(&f.m.Event, "event", "", "PGN Event tag")
	fl.IntVar(&f.m.RatingInterval, "ratinginterval", 10, "print the report or rating table every this many games (0 = only at the end)")
	fl.StringVar(&f.config, "config", "", "read the match from this JSON file (fastchess's field names)")
	fl.StringVar(&f.resume, "resume", "", "continue the match whose state this file holds")
	fl.StringVar(&f.state, "state", "", "write the match state here (default: next to --pgnout, else in the temporary directory)")
	fl.BoolVar(&f.quiet, "quiet", false, "do not print a line per finished game")
	fl.BoolVar(&f.json, "json", false, "print only the result, as JSON (plain integers, lower-case states)")
	// Read by main before the flags are parsed (fastchessArgs); declared
	// so that help lists them.
	fl.Bool("fastchess", false, "read the rest of the command line as fastchess's (-engine cmd=... -rounds N ...)")
	fl.Bool("cutechess-cli", false, "read the rest of the command line as cutechess-cli's")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write the runner's CPU profile here (for make bench-match)")
	fl.MarkHidden("cpuprofile")
	return cmd
}

// configFlags are the flags a --config file sets (those given on the
// command line win).
var configFlags = []string{"engine", "each", "openings", "games", "tournament", "seeds", "rounds", "repeat", "recover", "sprt",
	"concurrency", "pgnout", "resign", "draw", "maxmoves", "timemargin", "hangtimeout", "event", "ratinginterval"}

// fromConfig replaces the flags not given on the command line by the
// config's.
func fromConfig(fl *pflag.FlagSet, given matchplan.Flags, c *matchplan.Config) (matchplan.Flags, error) {
	def := given
	f, err := c.Flags(def)
	if err != nil {
		return f, err
	}
	for _, name := range configFlags {
		if !fl.Changed(name) {
			continue
		}
		switch name {
		case "engine":
			f.Engines = given.Engines
		case "each":
			f.Each = given.Each
		case "openings":
			f.Openings = given.Openings
		case "games":
			f.Games = given.Games
		case "tournament":
			f.Tournament = given.Tournament
		case "seeds":
			f.Seeds = given.Seeds
		case "rounds":
			f.Rounds = given.Rounds
		case "repeat":
			f.Repeat = given.Repeat
		case "recover":
			f.Recover = given.Recover
		case "sprt":
			f.SPRT = given.SPRT
		case "concurrency":
			f.Concurrency = given.Concurrency
		case "pgnout":
			f.PGNOut = given.PGNOut
		case "resign":
			f.Resign = given.Resign
		case "draw":
			f.Draw = given.Draw
		case "maxmoves":
			f.MaxMoves = given.MaxMoves
		case "timemargin":
			f.TimeMargin = given.TimeMargin
		case "hangtimeout":
			f.HangTimeout = given.HangTimeout
		case "event":
			f.Event = given.Event
		case "ratinginterval":
			f.RatingInterval = given.RatingInterval
		}
	}
	return f, nil
}

func runMatch(cmd *cobra.Command, f *matchFlags) error {
	fl := cmd.Flags()
	for _, name := range []string{"fastchess", "cutechess-cli"} {
		if fl.Changed(name) {
			return usageError("--%s: give it first, right after `match`, followed by that runner's command line (-engine cmd=... -rounds N ...)", name)
		}
	}
	flags := f.m
	var resume *match.State
	stateFile, tempState := f.state, false
	switch {
	case f.resume != "":
		var refused []string
		fl.Visit(func(p *pflag.Flag) {
			if !sessionFlags[p.Name] {
				refused = append(refused, "--"+p.Name)
			}
		})
		if len(refused) > 0 {
			return usageError("--resume: the match is the state file's; %s cannot change it (only --concurrency, --ratinginterval, --quiet, --json)", strings.Join(refused, ", "))
		}
		st, err := match.LoadState(f.resume)
		if err != nil {
			return usageError("--resume: %v", err)
		}
		if st.Status == match.StatusComplete || st.Status == match.StatusStopped {
			return usageError("--resume %s: the match is %s (%d games): nothing to play", f.resume, st.Status, st.GamesDone)
		}
		c, err := matchplan.ParseConfig(st.Config, "--resume "+f.resume+": config")
		if err != nil {
			return usageError("%v", err)
		}
		if flags, err = fromConfig(fl, f.m, c); err != nil {
			return usageError("--resume %s: %v", f.resume, err)
		}
		resume, stateFile = st, f.resume
	case f.config != "":
		c, err := matchplan.LoadConfig(f.config)
		if err != nil {
			return usageError("%v", err)
		}
		if flags, err = fromConfig(fl, f.m, c); err != nil {
			return usageError("--config %s: %v", f.config, err)
		}
	}
	if flags.PGNOut != "" {
		// The state names the PGN file; absolute, it is the same file
		// whichever directory the match is resumed from.
		if abs, err := filepath.Abs(flags.PGNOut); err == nil {
			flags.PGNOut = abs
		}
	}
	plan, err := matchplan.Parse(flags)
	if err != nil {
		if f.config != "" {
			return usageError("%v (with --config %s)", err, f.config)
		}
		return usageError("%v", err)
	}
	if stateFile == "" {
		if flags.PGNOut != "" {
			stateFile = strings.TrimSuffix(flags.PGNOut, ".pgn") + ".state.json"
		} else {
			stateFile = filepath.Join(os.TempDir(), fmt.Sprintf("arbiter-match-%s-%d.state.json", time.Now().Format("20060102-150405"), os.Getpid()))
			tempState = true
		}
	}
	tuneRunner(plan)
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return usageError("--cpuprofile: %v", err)
		}
		defer pf.Close()
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	o := matchplan.RunOptions{Out: cmd.OutOrStdout(), Quiet: f.quiet, JSON: f.json, RatingInterval: flags.RatingInterval,
		StateFile: stateFile, TempState: tempState, Resume: resume, Builtin: builtin.New}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := plan.Run(ctx, o)
	if err != nil {
		var refused *matchplan.GateRefusal
		if errors.As(err, &refused) {
			return failure("match refused before its first game: %v", err)
		}
		if st == nil {
			return usageError("%v", err)
		}
		return failure("%v", err)
	}
	switch st.Status {
	case match.StatusInterrupted:
		return failure("match interrupted after %d games; resume with: arbiter match --resume %s", st.Games, stateFile)
	case match.StatusFailed:
		return failure("match stopped: %s; resume with: arbiter match --resume %s", st.Failure, stateFile)
	}
	if tempState {
		os.Remove(stateFile)
	}
	return nil
}

// tuneRunner fits the process to the match: as many processors as its
// games need, and batch scheduling when no clock runs.
func tuneRunner(plan *matchplan.Plan) {
	if n := plan.RunnerProcs(); n > 0 {
		// A GOMAXPROCS in the environment is the user's choice and stays.
		if os.Getenv("GOMAXPROCS") == "" {
			runtime.GOMAXPROCS(min(n, runtime.GOMAXPROCS(0)))
		}
		// Without a clock the runner need not take an engine's CPU the
		// moment a line arrives (schedbatch). Failing only costs speed.
		if plan.Clockless() {
			schedbatch.Apply()
		}
	}
}

// fastchessArgs finds a fastchess or cutechess-cli command line: the
// binary called as fastchess or cutechess-cli (a symlink), `arbiter
// fastchess ARGS`, `arbiter match --fastchess|--cutechess-cli ARGS`, or
// `arbiter match` with single-dash options (-engine ...), which its own
// flags never are.
func fastchessArgs(argv []string) ([]string, fastchesscli.Dialect, bool) {
	if d, ok := fastchesscli.DialectOf(argv[0]); ok {
		return argv[1:], d, true
	}
	if len(argv) >= 2 && argv[1] == "fastchess" {
		return argv[2:], fastchesscli.Fastchess, true
	}
	if len(argv) < 3 || argv[1] != "match" {
		return nil, 0, false
	}
	switch argv[2] {
	case "--fastchess":
		return argv[3:], fastchesscli.Fastchess, true
	case "--cutechess-cli":
		return argv[3:], fastchesscli.Cutechess, true
	}
	if fastchesscli.Detect(argv[2:]) {
		return argv[2:], fastchesscli.Fastchess, true
	}
	return nil, 0, false
}

// runFastchess plays a match given as a fastchess or cutechess-cli command
// line (local/fastchesscli), printing that runner's lines.
func runFastchess(args []string, d fastchesscli.Dialect) error {
	inv, err := fastchesscli.Parse(args, d)
	if err != nil {
		return usageError("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = fastchesscli.Run(ctx, inv, fastchesscli.RunOptions{Stdout: os.Stdout, Stderr: os.Stderr, Builtin: builtin.New,
		Version: buildinfo.Read().Short(), Tune: tuneRunner})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fastchesscli.ErrUsage):
		return usageError("%v", err)
	}
	return failure("%v", err)
}
