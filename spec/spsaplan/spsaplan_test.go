package spsaplan

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/spsa"
)

const book = "file=../../books/uho-200.epd"

func flags(edit func(*Flags)) Flags {
	f := Flags{Engine: "name=dev,builtin", Each: "nodes=300", Openings: book + ",order=random", Params: "from-engine:RFPMargin,FutMargin",
		Pairs: 8, BatchPairs: 2, Alpha: spsa.DefaultAlpha, Gamma: spsa.DefaultGamma, ARatio: spsa.DefaultARatio, HangTimeout: 30000,
		Concurrency: 1, Throughput: 1}
	if edit != nil {
		edit(&f)
	}
	return f
}

// Every refusal names its flag, and for parameters the parameter and
// field; nothing is read past the first refusal.
func TestParseRefusals(t *testing.T) {
	dir := t.TempDir()
	badFile := filepath.Join(dir, "bad.txt")
	os.WriteFile(badFile, []byte("RFPMargin,75,20,300,5,0.002\nFutMargin,90,400,20,10,0.002\n"), 0o644)
	notSpin := filepath.Join(dir, "script.sh")
	os.WriteFile(notSpin, []byte("#!/bin/sh\nwhile read l; do case \"$l\" in uci) echo 'option name Ponder type check default false'; echo uciok;; quit) exit;; esac; done\n"), 0o755)
	for _, c := range []struct {
		edit func(*Flags)
		want string
	}{
		{func(f *Flags) { f.Engine = "" }, "--engine: required"},
		{func(f *Flags) { f.Engine = "name=x,cmd=/usr/games/fairymax,proto=xboard" }, "--engine x: an xboard engine"},
		{func(f *Flags) { f.Engine = "name=x,cmd=/no/such/engine" }, "--engine x:"},
		{func(f *Flags) { f.Engine = "name=dev,builtin,option.Bogus=1" }, "--engine dev:"},
		{func(f *Flags) { f.Each = "" }, "--each:"},
		{func(f *Flags) { f.Openings = "" }, "--openings: required"},
		{func(f *Flags) { f.Pairs = 0 }, "--pairs 0: want 1 to"},
		{func(f *Flags) { f.BatchPairs = -1 }, "--batch-pairs -1"},
		{func(f *Flags) { f.Alpha = 3 }, "--alpha 3: want a number from 0 to 2"},
		{func(f *Flags) { f.Gamma = -1 }, "--gamma -1"},
		{func(f *Flags) { f.ARatio = 11 }, "--A-ratio 11"},
		{func(f *Flags) { f.Concurrency = 0 }, "--concurrency 0"},
		{func(f *Flags) { f.Seed, f.Openings = 3, book+",order=random,seed=4" }, "--seed 3 and --openings seed=4"},
		{func(f *Flags) { f.Params = "" }, "--params: params: empty"},
		{func(f *Flags) { f.Params = "/no/such/params.txt" }, "no such file"},
		{func(f *Flags) { f.Params = "from-engine:NoSuchOption" }, `param "NoSuchOption": the engine has no option of that name`},
		{func(f *Flags) { f.Params = "from-engine:Hash,Threads" }, ""},
		{func(f *Flags) { f.Params = "NoSuch,1,0,5,1,0.002" }, `param "NoSuch": the engine has no option`},
		{func(f *Flags) { f.Params = "RFPMargin,75,300,20,5,0.002" }, `param "RFPMargin": min 300 > max 20`},
		{func(f *Flags) { f.Params = "RFPMargin,500,20,300,5,0.002" }, `param "RFPMargin": start 500 is outside`},
		{func(f *Flags) { f.Params = "RFPMargin,75,20,300,0,0.002" }, `param "RFPMargin": c_end 0 must be positive`},
		{func(f *Flags) { f.Params = "RFPMargin,75,20,300,5" }, "has 5 fields"},
		{func(f *Flags) { f.Params = "RFPMargin,75,0,300,5,0.002" }, `param "RFPMargin": min 0 is below the engine's min 20`},
		{func(f *Flags) { f.Params = badFile }, "bad.txt: params line 2: param \"FutMargin\": min 400 > max 20"},
		{func(f *Flags) { f.Engine = "name=dev,builtin,option.RFPMargin=999" }, "--engine dev:"},
		{func(f *Flags) { f.Engine, f.Params = "name=s,cmd="+notSpin, "from-engine:Ponder" }, `param "Ponder": the engine's option is a check, not a spin`},
	} {
		_, err := Parse(context.Background(), flags(c.edit))
		if c.want == "" {
			// Hash and Threads are spins: named, they are tuned.
			if err != nil {
				t.Errorf("named set-up spins refused: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

// The plan: parameters from the engine start at the engine spec's own
// values; the engine's limits are the tune's; the seed orders the book
// and fixes the perturbations, the same locally and in the spec.
func TestParsePlanAndSpec(t *testing.T) {
	p, err := Parse(context.Background(), flags(func(f *Flags) {
		f.Engine = "name=dev,builtin,option.RFPMargin=80,option.Hash=1,nodes=500"
		f.Seed, f.Remote, f.BatchPairs, f.Priority = 9, true, 0, 3
	}))
	if err != nil {
		t.Fatal(err)
	}
	ps := p.Config.Params
	if len(ps) != 2 || ps[0].Name != "RFPMargin" || ps[0].Start != 80 || ps[1].Start != 90 || ps[0].CEnd != 5 {
		t.Fatalf("params %+v", ps)
	}
	if p.Limits() != "nodes=500" || p.Config.Seed != 9 || p.Setup.BookOptions.Seed != 9 || p.Config.BatchPairs != 0 {
		t.Fatalf("limits %s, seed %d (book %d), batch %d", p.Limits(), p.Config.Seed, p.Setup.BookOptions.Seed, p.Config.BatchPairs)
	}
	spec, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if spec.GetSeed() != 9 || spec.GetBookOrder() != "random" || len(spec.GetOpenings()) != 200 || spec.GetPairs() != 8 ||
		spec.GetBatchPairs() != 0 || spec.GetAlpha() != spsa.DefaultAlpha || spec.GetTimeControl().GetNodes() != 500 ||
		spec.GetEngine().GetCommand() != "embedded" || spec.GetEngine().GetOptions()["Hash"] != "1" || spec.GetPriority() != 3 ||
		len(spec.GetParams()) != 2 || spec.GetParams()[0].GetStart() != 80 {
		t.Fatalf("spec %v", spec)
	}
	// The local plan with the same flags plays the book in the order the
	// coordinator will: the file order shuffled by the tune's seed.
	local, err := Parse(context.Background(), flags(func(f *Flags) { f.Seed = 9 }))
	if err != nil {
		t.Fatal(err)
	}
	if local.Config.BatchPairs != 2 || local.Setup.Config.Openings(0).FEN == "" {
		t.Fatalf("local plan %+v", local.Config)
	}
	seeded, _ := Parse(context.Background(), flags(func(f *Flags) { f.Openings = book + ",order=random,seed=9" }))
	if seeded.Setup.Config.Openings(5).FEN != local.Setup.Config.Openings(5).FEN || seeded.Config.Seed != 9 {
		t.Errorf("--seed 9 and --openings seed=9 differ")
	}
	// Batch size defaults locally; a cluster engine absent here is
	// checked by the workers, but its options cannot be listed here.
	if d, _ := Parse(context.Background(), flags(func(f *Flags) { f.BatchPairs = 0 })); d.Config.BatchPairs != DefaultLocalBatchPairs {
		t.Errorf("local default batch %d", d.Config.BatchPairs)
	}
	remote, err := Parse(context.Background(), flags(func(f *Flags) {
		f.Engine, f.Remote, f.Params = "name=x,cmd=/opt/engines/x", true, "Aggression,int,5,0,10,1,0.002"
	}))
	if err != nil || !strings.Contains(remote.Unchecked, "engine x is not on this machine") {
		t.Errorf("remote engine: %v, %q", err, remote.Unchecked)
	}
	_, err = Parse(context.Background(), flags(func(f *Flags) { f.Engine, f.Remote = "name=x,cmd=/opt/engines/x", true }))
	if err == nil || !strings.Contains(err.Error(), "--params from-engine: the options of engine x are read on this machine") {
		t.Errorf("from-engine of an absent engine: %v", err)
	}
}

// A UCI engine's options are read by starting it: spin options with their
// range, a list checked against them.
func TestParseUCIEngine(t *testing.T) {
	const toga = "/usr/games/toga2"
	if _, err := os.Stat(toga); err != nil {
		t.Skip("toga2 is not installed (apt-get install toga2)")
	}
	ps, err := EngineParams(context.Background(), "name=toga,cmd="+toga, "from-engine:King Safety,Pawn Structure")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name != "King Safety" || ps[0].Start != 100 || ps[0].Min != 0 || ps[0].Max != 400 || ps[0].CEnd != 20 {
		t.Fatalf("params %+v", ps)
	}
	all, err := EngineParams(context.Background(), "name=toga,cmd="+toga, "from-engine")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if strings.Contains(p.Name, "Threads") || strings.Contains(p.Name, "Cache") || strings.Contains(p.Name, "Hash") {
			t.Errorf("set-up option %q offered for tuning", p.Name)
		}
	}
	if _, err := EngineParams(context.Background(), "name=toga,cmd="+toga, "King Safety,100,0,900,20,0.002"); err == nil ||
		!strings.Contains(err.Error(), `param "King Safety": max 900 is above the engine's max 400`) {
		t.Errorf("a range past the engine's: %v", err)
	}
}

// A local tune with a record, cut short (a kill mid-write leaves a partial
// line) and resumed: the batches it lacked are played, none twice, and the
// record replays to the tune's θ.
func TestRunRecordResume(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "tune.rec")
	p, err := Parse(context.Background(), flags(func(f *Flags) { f.Concurrency = 2 }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, pgn bytes.Buffer
	full, err := p.Run(ctx, RunOptions{Out: &out, PGN: &pgn, Record: rec, Builtin: builtin.New})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if full.Updates() != 4 || strings.Count(out.String(), "update ") != 4 || !strings.Contains(out.String(), "Finished tune: 4 updates, 8 pairs") {
		t.Fatalf("tune:\n%s", out.String())
	}
	if n := strings.Count(pgn.String(), "[Event \"Arbiter tune\"]"); n != 16 {
		t.Errorf("%d games in the PGN, want 16", n)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[1], "tune {") {
		t.Fatalf("record:\n%s", b)
	}
	// Keep two updates and half of the third line, as a kill would.
	cut := strings.Join(lines[:4], "\n") + "\n" + lines[4][:len(lines[4])/2]
	if err := os.WriteFile(rec, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	resumed, err := p.Run(ctx, RunOptions{Out: &out, Record: rec, Quiet: true, Builtin: builtin.New})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Resumed from "+rec+": 2 of 4 updates applied") || resumed.Updates() != 4 {
		t.Fatalf("resume:\n%s", out.String())
	}
	b, _ = os.ReadFile(rec)
	again := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(again) != 6 || strings.Join(again[:4], "\n") != strings.Join(lines[:4], "\n") {
		t.Fatalf("record after the resume:\n%s", b)
	}
	var updates []spsa.Update
	seen := map[int]bool{}
	for _, l := range again[2:] {
		u, err := parseUpdate(l)
		if err != nil || seen[u.Batch] {
			t.Fatalf("line %q: %v (or repeated)", l, err)
		}
		seen[u.Batch] = true
		updates = append(updates, u)
	}
	re, err := spsa.Replay(p.Config, updates)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range re.Theta() {
		if v != resumed.Theta()[i] {
			t.Fatalf("replay %v, tune %v", re.Theta(), resumed.Theta())
		}
	}
	// A finished tune resumed plays nothing.
	out.Reset()
	if done, err := p.Run(ctx, RunOptions{Out: &out, Record: rec, Builtin: builtin.New}); err != nil || done.Updates() != 4 ||
		strings.Contains(out.String(), "update ") {
		t.Fatalf("finished tune again: %v\n%s", err, out.String())
	}
	// The record of another tune is refused, naming the flag.
	other, _ := Parse(context.Background(), flags(func(f *Flags) { f.Pairs = 10 }))
	if _, err := other.Run(ctx, RunOptions{Out: &out, Record: rec, Builtin: builtin.New}); err == nil ||
		!strings.Contains(err.Error(), "--record") || !strings.Contains(err.Error(), "other parameters, pairs") {
		t.Errorf("another tune's record: %v", err)
	}
	slower, _ := Parse(context.Background(), flags(func(f *Flags) { f.Each = "nodes=400" }))
	if _, err := slower.Run(ctx, RunOptions{Out: &out, Record: rec, Builtin: builtin.New}); err == nil ||
		!strings.Contains(err.Error(), "nodes=300") {
		t.Errorf("a record of other limits: %v", err)
	}
	os.WriteFile(rec, []byte("tune {}\nupdate 0 1\n"), 0o644)
	if _, err := p.Run(ctx, RunOptions{Out: &out, Record: rec, Builtin: builtin.New}); err == nil || !strings.Contains(err.Error(), "--record") {
		t.Errorf("a broken record: %v", err)
	}
}
