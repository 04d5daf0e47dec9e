package matchplan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/testing/tbtest"
)

const book = "file=../../books/uho-200.epd"

func flags(extra func(*Flags)) Flags {
	f := Flags{Engines: []string{"name=a,builtin", "name=b,builtin,option.UseNNUE=false,option.KnightValueMG=200"}, Each: "nodes=300",
		Openings: book + ",order=random,seed=3", Games: 2, Concurrency: 1, HangTimeout: 30000, RatingInterval: 10}
	if extra != nil {
		extra(&f)
	}
	return f
}

// Every refusal names the flag it is about.
func TestParseRefusals(t *testing.T) {
	for _, c := range []struct {
		edit func(*Flags)
		want string
	}{
		{func(f *Flags) { f.Engines = f.Engines[:1] }, "--engine: give at least two engines (got 1)"},
		{func(f *Flags) { f.Engines[1] = "name=a,builtin" }, `--engine: both engines are named "a"`},
		{func(f *Flags) { f.Engines[0] = "name=a,cmd=/no/such/engine" }, "--engine a:"},
		{func(f *Flags) { f.Each = "tc=x" }, "--each:"},
		{func(f *Flags) { f.Openings = "order=random" }, "--openings: missing file="},
		{func(f *Flags) { f.Openings = book + ",colour=red" }, `--openings: unknown key "colour"`},
		{func(f *Flags) { f.Openings = book + ",,seed=1" }, "--openings " + `"` + book + `,,seed=1": empty item`},
		{func(f *Flags) { f.Games = 3 }, "--games: 3 is odd"},
		{func(f *Flags) { f.Games, f.SPRT = 0, "" }, "give --games N, --sprt elo0=..,elo1=.. or --stop precision=ELO"},
		{func(f *Flags) { f.Stop = "precision=0" }, "--stop precision: 0 is not a width in Elo in (0, 1000]"},
		{func(f *Flags) { f.Stop = "precision=nan" }, "--stop precision: NaN is not a width"},
		{func(f *Flags) { f.Stop = "precision=ten" }, `--stop precision=ten: not a number of Elo`},
		{func(f *Flags) { f.Stop = "width=10" }, `--stop: unknown key "width" (known: precision)`},
		{func(f *Flags) { f.Stop = "precision=10"; f.Engines = append(f.Engines, "name=c,builtin") }, "--stop: a precision stop is for a match of two engines (got 3)"},
		{func(f *Flags) { f.SPRT = "elo0=1" }, "--sprt: give both elo0= and elo1="},
		{func(f *Flags) { f.SPRT = "elo0=0,elo1=x" }, `--sprt: elo1="x": want a number`},
		{func(f *Flags) { f.Concurrency = 0 }, "--concurrency: 0 is not in 1..1024"},
		{func(f *Flags) { f.Resign = "movecount=3" }, "--resign: give movecount= and score="},
		{func(f *Flags) { f.Draw = "score=3" }, "--draw: give movecount="},
		{func(f *Flags) { f.MaxMoves = -1 }, "--maxmoves: -1 is negative"},
		{func(f *Flags) { f.TimeMargin = -1 }, "--timemargin: -1 is negative"},
		{func(f *Flags) { f.HangTimeout = 0 }, "--hangtimeout: 0 is not positive"},
		{func(f *Flags) { f.RatingInterval = -1 }, "--ratinginterval: -1 is negative"},
	} {
		_, err := Parse(flags(c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
	if _, err := Parse(flags(nil)); err != nil {
		t.Fatalf("good flags refused: %v", err)
	}
}

func TestParsePlan(t *testing.T) {
	p, err := Parse(flags(func(f *Flags) {
		f.SPRT = "elo0=0,elo1=5,alpha=0.1,model=logistic"
		f.Resign, f.Draw, f.MaxMoves, f.TimeMargin = "movecount=3,score=600", "movenumber=30,movecount=8,score=10", 150, 25
		f.Engines[1] += ",nodes=600"
	}))
	if err != nil {
		t.Fatal(err)
	}
	adj := p.Config.Game.Adjudication
	if p.SPRT == nil || p.SPRT.Elo1 != 5 || p.SPRT.Alpha != 0.1 || string(p.SPRT.Model) != "logistic" ||
		adj.ResignMoves != 3 || adj.ResignScore != 600 || adj.DrawMoveNumber != 30 || adj.DrawMoves != 8 || adj.MaxMoves != 150 ||
		p.Config.Game.TimeMargin != 25*time.Millisecond || p.BookName != "uho-200.epd" || p.Config.Pairs != 1 {
		t.Fatalf("plan %+v, SPRT %+v", p.Config, p.SPRT)
	}
	if got := p.Limits(); got != "nodes=300 vs nodes=600" {
		t.Errorf("limits %q", got)
	}
}

// The cluster's spec: the book in file order with order, seed and start
// beside it; an engine's own limits beside the test's; unplayable clocks
// refused.
func TestSpec(t *testing.T) {
	tf := TestFlags{Match: flags(func(f *Flags) { f.Openings = book + ",order=random,start=4"; f.Games = 0; f.SPRT = "elo0=0,elo1=5" }),
		Priority: 2, Throughput: 1, Seed: 9}
	spec, _, err := tf.Spec(true)
	if err != nil {
		t.Fatal(err)
	}
	if spec.GetBookOrder() != "random" || spec.GetSeed() != 9 || spec.GetBookStart() != 4 || len(spec.GetOpenings()) != 200 ||
		spec.GetSprt().GetElo1() != 5 || spec.GetPriority() != 2 || spec.GetEngineA().GetCommand() != "embedded" {
		t.Fatalf("spec %v", spec)
	}
	if _, _, err := tf.Spec(false); err == nil || !strings.Contains(err.Error(), "use `submit sprt`") {
		t.Errorf("an SPRT as a match: %v", err)
	}
	if spec.GetEngineA().GetTimeControl() != nil || spec.GetEngineB().GetTimeControl() != nil {
		t.Errorf("engines without limits of their own carry %v, %v", spec.GetEngineA().GetTimeControl(), spec.GetEngineB().GetTimeControl())
	}
	// Node odds: b's own limit travels with b, the test keeps --each's.
	tf.Match.Engines[1] += ",nodes=600"
	spec, _, err = tf.Spec(true)
	if err != nil {
		t.Fatal(err)
	}
	if spec.GetTimeControl().GetNodes() != 300 || spec.GetEngineA().GetTimeControl() != nil || spec.GetEngineB().GetTimeControl().GetNodes() != 600 {
		t.Errorf("per-engine limits: test %v, a %v, b %v", spec.GetTimeControl(), spec.GetEngineA().GetTimeControl(), spec.GetEngineB().GetTimeControl())
	}
	// Time odds with no --each: the test has no time control of its own.
	tf.Match.Engines = []string{"name=a,builtin,tc=2+0.02", "name=b,builtin,tc=1+0.01"}
	tf.Match.Each = ""
	if spec, _, err = tf.Spec(true); err != nil {
		t.Fatal(err)
	}
	a, b := spec.GetEngineA().GetTimeControl().GetClock(), spec.GetEngineB().GetTimeControl().GetClock()
	if spec.GetTimeControl() != nil || a.GetBase().AsDuration() != 2*time.Second || b.GetIncrement().AsDuration() != 10*time.Millisecond {
		t.Errorf("time odds: test %v, a %v, b %v", spec.GetTimeControl(), a, b)
	}
	// An engine's own limits are refused as --each's would be, naming it;
	// one engine without limits needs --each's.
	for _, c := range []struct{ b, want string }{
		{"name=b,builtin,tc=0.01", "--engine b: tc=0.01: a base time under 0.05 s cannot be played"},
		{"name=b,builtin,tc=1+0.01,nodes=500", "--engine b: time control \"tc=1+0.01,nodes=500\": a cluster test takes exactly one of"},
		{"name=b,builtin,depth=200", "--engine b: depth=200: beyond 128 plies"},
		{"name=b,builtin", "engine b: no limit"},
	} {
		tf.Match.Engines[1] = c.b
		if _, _, err := tf.Spec(true); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.b, err, c.want)
		}
	}
	tf = TestFlags{Match: flags(func(f *Flags) { f.Each = "tc=0.01" })}
	if _, _, err := tf.Spec(false); err == nil || !strings.Contains(err.Error(), "cannot be played") {
		t.Errorf("a clock of 10 ms: %v", err)
	}
	if !tf.Given() || (&TestFlags{}).Given() {
		t.Error("Given")
	}
}

// A local match of the embedded engine against itself weakened: a line
// per game, the fastchess report and the summary.
func TestRun(t *testing.T) {
	p, err := Parse(flags(func(f *Flags) { f.Games = 4; f.RatingInterval = 2 }))
	if err != nil {
		t.Fatal(err)
	}
	var out, pgn bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := p.Run(ctx, RunOptions{Out: &out, PGN: &pgn, RatingInterval: 2, Builtin: builtin.New}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"Match a vs b: nodes=300, uho-200.epd, concurrency 1", "Finished game 1.1 (a vs b)", "Finished game 2.2 (b vs a)",
		"Results of a vs b (nodes=300, uho-200.epd)", "Ptnml(0-2)", "Games: 4 in", "Finished match"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "Results of"); n != 2 {
		t.Errorf("%d reports for 4 games every 2, want 2:\n%s", n, s)
	}
	if n := strings.Count(pgn.String(), "[Event "); n != 4 {
		t.Errorf("%d games in the PGN, want 4", n)
	}
}

// A two-engine match at fixed nodes or depth that plays an opening twice
// says so: the engines replay the same games.
func TestRepeatNote(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(*Flags)
		want string // "" : no note
	}{
		{"within the book", func(f *Flags) { f.Games = 400 }, ""},
		{"three times", func(f *Flags) { f.Games = 1200 }, "1200 games play the 200 openings of uho-200.epd up to 3 times each"},
		{"depth", func(f *Flags) { f.Games = 402; f.Each = "depth=3" }, "up to 2 times each"},
		{"one engine's own nodes", func(f *Flags) { f.Games = 1200; f.Engines[1] += ",nodes=500" }, "up to 3 times"},
		{"no book", func(f *Flags) { f.Games = 4; f.Openings = "" }, "4 games play the start position up to 2 times each"},
		{"an SPRT without a cap", func(f *Flags) { f.Games = 0; f.SPRT = "elo0=0,elo1=5" }, "without --games the match plays the 200 openings of uho-200.epd again after 400 games"},
		{"a clock", func(f *Flags) { f.Games = 1200; f.Each = "tc=1+0.01" }, ""},
		{"one engine on a clock", func(f *Flags) { f.Games = 1200; f.Engines[1] += ",tc=1+0.01" }, ""},
		{"movetime", func(f *Flags) { f.Games = 1200; f.Each = "movetime=10" }, ""},
		{"a tournament", func(f *Flags) { f.Games = 2; f.Rounds = 1000; f.Engines = append(f.Engines, "name=c,builtin") }, ""},
	} {
		p, err := Parse(flags(c.f))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := p.RepeatNote()
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: note %q, want %q", c.name, got, c.want)
		}
	}
	// An SPRT without a cap on a book of 10,000 openings repeats only
	// after 20,000 games: no note.
	p, err := Parse(flags(func(f *Flags) { f.Games = 0; f.SPRT = "elo0=0,elo1=5" }))
	if err != nil {
		t.Fatal(err)
	}
	p.Book.Openings = make([]match.Opening, 10000)
	if got := p.RepeatNote(); got != "" {
		t.Errorf("SPRT on a large book: note %q", got)
	}
}

// The state file keeps the plan as a Config; read back, it makes the same
// plan: schedule, engines, book, SPRT and adjudication.
func TestConfigRoundTrip(t *testing.T) {
	for _, edit := range []func(*Flags){
		func(f *Flags) {
			f.Games = 10
			f.SPRT = "elo0=0,elo1=5,model=logistic"
			f.Resign = "movecount=3,score=600"
		},
		func(f *Flags) {
			f.Engines = append(f.Engines, "builtin,nodes=500")
			f.Tournament, f.Rounds, f.Games, f.Draw, f.MaxMoves, f.Recover = "gauntlet", 3, 4, "movenumber=30,movecount=8,score=10", 90, true
		},
		func(f *Flags) {
			f.Engines = append(f.Engines, "builtin")
			f.Rounds, f.Games, f.Repeat, f.Openings = 2, 3, 1, ""
		},
	} {
		p, err := Parse(flags(edit))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(ConfigOf(p))
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseConfig(b, "state")
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		f, err := c.Flags(Flags{HangTimeout: 1})
		if err != nil {
			t.Fatal(err)
		}
		q, err := Parse(f)
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		if !q.Schedule.Same(p.Schedule) || !reflect.DeepEqual(q.Engines, p.Engines) || q.Config.Game != p.Config.Game ||
			q.Config.Limits != p.Config.Limits || q.Config.Pairs != p.Config.Pairs || q.Flags.Recover != p.Flags.Recover ||
			!reflect.DeepEqual(q.SPRT, p.SPRT) || q.BookName != p.BookName || q.Config.Concurrency != p.Config.Concurrency {
			t.Errorf("config %s\nmade %+v %v\nfrom %+v %v", b, q.Config, q.Schedule, p.Config, p.Schedule)
		}
	}
}

// Tournament flags: fastchess's --rounds/--games, the defaults, the
// two-engine match's own --games.
func TestParseSchedule(t *testing.T) {
	three := func(f *Flags) { f.Engines = append(f.Engines, "builtin") }
	for _, c := range []struct {
		edit func(*Flags)
		want string
		len  int
	}{
		{func(f *Flags) { f.Games = 10 }, "roundrobin of 2 engines, 5 rounds of 2 games per pairing, 2 per opening", 10},
		{func(f *Flags) { three(f); f.Rounds, f.Games = 2, 0 }, "roundrobin of 3 engines, 2 rounds of 2 games per pairing, 2 per opening", 12},
		{func(f *Flags) { three(f); f.Tournament, f.Rounds, f.Games = "gauntlet", 3, 1 }, "", 6},
		{func(f *Flags) { f.Rounds, f.Games, f.Repeat = 4, 4, 4 }, "", 16},
	} {
		p, err := Parse(flags(c.edit))
		if err != nil {
			t.Fatal(err)
		}
		if (c.want != "" && p.Schedule.String() != c.want) || p.Schedule.Len() != c.len {
			t.Errorf("schedule %q of %d games, want %q of %d", p.Schedule, p.Schedule.Len(), c.want, c.len)
		}
	}
	tf := TestFlags{Match: flags(three)}
	if _, _, err := tf.Spec(false); err == nil || !strings.Contains(err.Error(), "exactly two engines") {
		t.Errorf("three engines on the cluster: %v", err)
	}
	// As one test per pairing, each engine keeps its own limits in every
	// pairing it plays.
	tf = TestFlags{Match: flags(func(f *Flags) {
		f.Engines = append(f.Engines, "name=c,builtin,nodes=900")
		f.Rounds, f.Games = 1, 2
	})}
	tests, _, err := tf.TournamentSpecs()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pt := range tests {
		got = append(got, fmt.Sprintf("%s:%d %s:%d", pt.Spec.GetEngineA().GetName(), pt.Spec.GetEngineA().GetTimeControl().GetNodes(),
			pt.Spec.GetEngineB().GetName(), pt.Spec.GetEngineB().GetTimeControl().GetNodes()))
	}
	if want := []string{"a:0 b:0", "a:0 c:900", "b:0 c:900"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pairings' own limits %v, want %v", got, want)
	}
}

// fastchess's time forms reach the plan: st= in seconds with fractions,
// tc=inf with a node limit.
func TestParseTimeForms(t *testing.T) {
	for _, c := range []struct {
		each string
		want match.Limits
	}{
		{"st=0.5", match.Limits{MoveTime: 500 * time.Millisecond}},
		{"tc=inf,nodes=1000", match.Limits{Nodes: 1000}},
	} {
		p, err := Parse(flags(func(f *Flags) { f.Each = c.each }))
		if err != nil {
			t.Fatalf("%s: %v", c.each, err)
		}
		if p.Config.Limits != c.want {
			t.Errorf("--each %s: %+v, want %+v", c.each, p.Config.Limits, c.want)
		}
	}
}

// A match of engine processes runs on few processors; one with the builtin
// engine, which searches in this process, keeps them all.
func TestRunnerProcs(t *testing.T) {
	sf := func(name string) string { return "name=" + name + ",cmd=/bin/true" }
	for _, c := range []struct {
		engines     []string
		concurrency int
		want        int
	}{
		{[]string{sf("a"), sf("b")}, 1, 1},
		{[]string{sf("a"), sf("b")}, 16, 1},
		{[]string{sf("a"), sf("b")}, 17, 2},
		{[]string{sf("a"), sf("b"), sf("c")}, 40, 3},
		{[]string{sf("a"), "name=b,builtin"}, 2, 0},
		{[]string{"name=a,builtin", "name=b,builtin"}, 1, 0},
	} {
		p, err := Parse(flags(func(f *Flags) {
			f.Engines, f.Concurrency = c.engines, c.concurrency
			if len(c.engines) > 2 {
				f.Rounds = 1
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.RunnerProcs(); got != c.want {
			t.Errorf("%v, concurrency %d: RunnerProcs %d, want %d", c.engines, c.concurrency, got, c.want)
		}
	}
}

// Clockless: true only when no engine has a clock, whether the limits are
// common (--each) or an engine's own.
func TestClockless(t *testing.T) {
	for _, c := range []struct {
		each    string
		engines []string
		want    bool
	}{
		{"nodes=300", nil, true},
		{"depth=4", nil, true},
		{"tc=10+0.1", nil, false},
		{"st=0.5", nil, false},
		{"nodes=300", []string{"name=a,builtin", "name=b,builtin,tc=10+0.1"}, false},
	} {
		p, err := Parse(flags(func(f *Flags) {
			f.Each = c.each
			if c.engines != nil {
				f.Engines = c.engines
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Clockless(); got != c.want {
			t.Errorf("--each %s, engines %v: Clockless %v, want %v", c.each, c.engines, got, c.want)
		}
	}
}

// syzygy=N on a local match's engine probes the tables of --tb DIR:
// resolved into the engine's SyzygyPath and SyzygyProbeLimit; refused
// without --tb or with more pieces than the tables have. A cluster test
// keeps N for the workers to resolve.
func TestEngineSyzygyTables(t *testing.T) {
	dir := tbtest.Dir(t)
	p, err := Parse(flags(func(f *Flags) { f.Engines[0] = "name=a,builtin,syzygy=4"; f.TB = dir }))
	if err != nil {
		t.Fatal(err)
	}
	opts := p.Config.Engines[0].OptionMap()
	if opts["SyzygyPath"] != dir || opts["SyzygyProbeLimit"] != "4" || p.Config.Engines[0].SyzygyPieces != 0 {
		t.Errorf("engine a: options %v, pieces %d; want SyzygyPath %s, SyzygyProbeLimit 4, resolved", opts, p.Config.Engines[0].SyzygyPieces, dir)
	}
	if _, ok := p.Config.Engines[1].OptionMap()["SyzygyPath"]; ok {
		t.Errorf("engine b got tables it did not ask for")
	}
	for _, c := range []struct {
		edit func(*Flags)
		want string
	}{
		{func(f *Flags) { f.Engines[0] = "name=a,builtin,syzygy=4" }, "--engine a: syzygy=4 probes the tables of --tb DIR, and none is given"},
		{func(f *Flags) { f.Engines[0] = "name=a,builtin,syzygy=7"; f.TB = dir }, "syzygy=7: the tables in " + dir + " have at most"},
	} {
		if _, err := Parse(flags(c.edit)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want an error with %q", err, c.want)
		}
	}
	remote, err := Parse(flags(func(f *Flags) {
		f.Engines[0] = "name=a,builtin,syzygy=4"
		f.Remote = true
		f.SPRT = "elo0=0,elo1=5"
		f.Games = 0
	}))
	if err != nil {
		t.Fatal(err)
	}
	if e := remote.Config.Engines[0]; e.SyzygyPieces != 4 || e.OptionMap()["SyzygyPath"] != "" {
		t.Errorf("cluster engine: pieces %d, options %v; want 4 and no path", e.SyzygyPieces, e.OptionMap())
	}
}
