package fastchesscli

import (
	"strings"
	"testing"
)

// TestFastchessParseMeaning checks what fastchess's options become in
// arbiter's match: -repeat is -games 2 with one opening a round, start=
// counts from 1, -srand seeds a random book, engine keys map to the
// engine grammar with -each's below each engine's own.
func TestFastchessParseMeaning(t *testing.T) {
	inv, err := Parse(strings.Fields("-recover -repeat -games 2 -rounds 7 -srand 99 -openings file=b.epd format=epd order=random plies=16 start=11 "+
		"-resign movecount=3 score=600 -draw movenumber=34 movecount=8 score=20 -concurrency 3 "+
		"-engine name=New tc=10+0.1 cmd=./sf dir=. option.Hash=16 -engine name=Base tc=40/1:00+0.5 cmd=./sf dir=. plies=9 "+
		"-each proto=uci option.Threads=1 option.Hash=8 timemargin=250 -sprt elo0=0 elo1=2 model=bayesian -maxmoves 200 -event E -site S"), Fastchess)
	if err != nil {
		t.Fatal(err)
	}
	f := inv.Flags
	for _, c := range []struct{ got, want any }{
		{f.Games, 2}, {f.Repeat, 2}, {f.Rounds, 7}, {f.Recover, true}, {f.Concurrency, 3},
		{f.Openings, "file=b.epd,format=epd,order=fastchess,plies=16,start=10,seed=99"},
		{f.Resign, "movecount=3,score=600"}, {f.Draw, "movenumber=34,movecount=8,score=20"},
		{f.SPRT, "elo0=0,elo1=2,model=bayeselo"}, {f.MaxMoves, 200}, {f.TimeMargin, 250}, {f.Event, "E"}, {inv.Site, "S"},
		{len(f.Engines), 2},
		{f.Engines[0], "name=New,cmd=./sf,dir=.,proto=uci,option.Threads=1,option.Hash=16,tc=10+0.1"},
		{f.Engines[1], "name=Base,cmd=./sf,dir=.,proto=uci,option.Threads=1,option.Hash=8,tc=40/1:00+0.5,depth=9"},
		{inv.Output, "fastchess"}, {inv.Penta, true}, {inv.RatingInterval, 10}, {inv.StateFile, "config.json"},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
}

// TestCutechessParseMeaning: cutechess-cli's -repeat repeats an opening
// (games stay per encounter), its -pgnout and -epdout take a plain file
// name, and its SPRT is in BayesElo.
func TestCutechessParseMeaning(t *testing.T) {
	inv, err := Parse(strings.Fields("-engine cmd=a -engine cmd=a -each proto=xboard tc=40/60 arg=-x -games 2 -rounds 5 -repeat -pgnout g.pgn -epdout e.epd -sprt elo0=0 elo1=10"), Cutechess)
	if err != nil {
		t.Fatal(err)
	}
	f := inv.Flags
	for _, c := range []struct{ got, want any }{
		{f.Games, 2}, {f.Repeat, 2}, {f.Rounds, 5}, {f.PGNOut, "g.pgn"}, {inv.EPDOut, "e.epd"},
		{f.SPRT, "elo0=0,elo1=10,model=bayeselo"}, {inv.Output, "cutechess"},
		{f.Engines[0], "name=a,cmd=a,args=-x,proto=xboard,tc=40/60"},
		{f.Engines[1], "name=a2,cmd=a,args=-x,proto=xboard,tc=40/60"},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
	inv, err = Parse(strings.Fields("-engine cmd=a -engine cmd=b -each nodes=5 -games 3"), Cutechess)
	if err != nil || inv.Flags.Repeat != 1 {
		t.Errorf("cutechess without -repeat: repeat %d, %v (want a new opening every game)", inv.Flags.Repeat, err)
	}
}

// TestFastchessParseRefusesByName: every option arbiter does not carry out, every
// unknown option and every unknown key is an error that names it.
func TestFastchessParseRefusesByName(t *testing.T) {
	base := "-engine cmd=a -engine cmd=b -each nodes=10 "
	cases := map[string]string{
		"-frobnicate":                                   "-frobnicate",
		"-engine cmd=c colour=red":                      "colour",
		"-each ponder":                                  "ponder",
		"-openings file=b.epd sorting=random":           "sorting",
		"-openings file=b.pgn policy=round":             "policy=round",
		"-sprt elo0=0 elo2=5":                           "elo2",
		"-draw movecount=3 score=10 depth=3":            "depth",
		"-pgnout file=a.pgn hashfull=true":              "hashfull=true",
		"-pgnout file=a.pgn latency=true":               "latency=true",
		"-pgnout file=a.pgn min=true":                   "min=true",
		"-pgnout file=a.pgn pv=true":                    "pv=true",
		"-log file=l compress=true":                     "compress=true",
		"-config file=c.json stats=false":               "stats=false",
		"-variant crazyhouse":                           "crazyhouse",
		"-tournament knockout":                          "knockout",
		"-output format=json":                           "format=json",
		"-report penta=maybe":                           "penta=maybe",
		"-rounds many":                                  "-rounds",
		"-engine cmd=c restart=sometimes":               "restart=sometimes",
		"-engine cmd=c tc=1+0 timemargin=-5":            "timemargin=-5",
		"-engine cmd=c proto=usi":                       "proto=usi",
		"-engine cmd=c timemargin=5 -each timemargin=9": "timemargin",
	}
	for name := range refused {
		cases["-"+name] = "-" + name
	}
	for extra, want := range cases {
		_, err := Parse(strings.Fields(base+extra), Fastchess)
		if err == nil {
			t.Errorf("%s: accepted", extra)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not name %s", extra, err, want)
		}
	}
	if _, err := Parse([]string{"engine", "-rounds", "1"}, Fastchess); err == nil || !strings.Contains(err.Error(), `"engine"`) {
		t.Errorf("a value before any option: %v", err)
	}
}

func TestFastchessDetect(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"-engine", "cmd=x"}, true},
		{[]string{"--engine", "cmd=x", "--games", "2"}, false},
		{[]string{"--resign", "movecount=3,score=-5"}, false},
		{[]string{"--engine", "cmd=x", "-v"}, false},
		{nil, false},
	} {
		if got := Detect(c.args); got != c.want {
			t.Errorf("Detect(%q) = %v", c.args, got)
		}
	}
}
