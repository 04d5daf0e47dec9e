package enginespec

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
)

func opts(kv ...string) []Setting {
	var s []Setting
	for i := 0; i < len(kv); i += 2 {
		s = append(s, Setting{kv[i], kv[i+1]})
	}
	return s
}

// Every --engine, --each and --verify-engine form in the README, docs/,
// scripts and tests parses to what it always meant.
func TestDocumentedForms(t *testing.T) {
	for _, c := range []struct {
		use  Use
		in   string
		want Spec
	}{
		// docs/match.md, README, docs/engine.md, scripts/bench-match.sh
		{Match, "name=new,cmd=./stockfish-new,option.Hash=16", Spec{Name: "new", Cmd: "./stockfish-new", Options: opts("Hash", "16")}},
		{Match, "name=new,builtin,option.RFPMargin=80", Spec{Name: "new", Proto: Builtin, Options: opts("RFPMargin", "80")}},
		{Match, "name=weak,builtin,option.KnightValueMG=150,option.BishopValueMG=150", Spec{Name: "weak", Proto: Builtin, Options: opts("KnightValueMG", "150", "BishopValueMG", "150")}},
		{Match, "name=gnuchess,cmd=/usr/games/gnuchess,args=-u,option.OwnBook=false", Spec{Name: "gnuchess", Cmd: "/usr/games/gnuchess", Args: []string{"-u"}, Options: opts("OwnBook", "false")}},
		{Match, "name=phalanx,cmd=/usr/games/phalanx,args=-b- -l-,proto=xboard", Spec{Name: "phalanx", Cmd: "/usr/games/phalanx", Args: []string{"-b-", "-l-"}, Proto: Xboard}},
		{Match, "name=fairymax,cmd=/usr/games/fairymax,proto=xboard,depth=3", Spec{Name: "fairymax", Cmd: "/usr/games/fairymax", Proto: Xboard, Limits: opts("depth", "3")}},
		{Match, "name=phalanx,cmd=/usr/games/phalanx,args=-b- -l-,proto=xboard,movetime=30", Spec{Name: "phalanx", Cmd: "/usr/games/phalanx", Args: []string{"-b-", "-l-"}, Proto: Xboard, Limits: opts("movetime", "30")}},
		{Match, "name=skill8,cmd=/usr/games/stockfish,option.Skill Level=8,option.Hash=8", Spec{Name: "skill8", Cmd: "/usr/games/stockfish", Options: opts("Skill Level", "8", "Hash", "8")}},
		{Match, "name=sf-a,cmd=/usr/games/stockfish,option.Threads=1,option.Hash=16", Spec{Name: "sf-a", Cmd: "/usr/games/stockfish", Options: opts("Threads", "1", "Hash", "16")}},
		{Match, "name=a,builtin=true", Spec{Name: "a", Proto: Builtin}},
		// A local match names an engine after itself when name= is left out;
		// st= is seconds, as in fastchess and cutechess-cli.
		{LocalMatch, "cmd=/usr/games/stockfish,option.Skill Level=3,st=0.5", Spec{Cmd: "/usr/games/stockfish", Options: opts("Skill Level", "3"), Limits: opts("st", "0.5")}},
		{LocalMatch, "/usr/games/stockfish", Spec{Cmd: "/usr/games/stockfish"}},
		{LocalMatch, "builtin", Spec{Proto: Builtin}},
		{Each, "tc=inf,depth=8", Spec{Limits: opts("tc", "inf", "depth", "8")}},
		{Each, "tc=10+0.1", Spec{Limits: opts("tc", "10+0.1")}},
		{Each, "nodes=2000,option.Hash=8,proto=uci", Spec{Limits: opts("nodes", "2000"), Options: opts("Hash", "8"), Proto: UCI}},
		// docs/verify.md, README, cmd/arbiter and coordinator/e2e tests
		{Verify, "cmd=/usr/games/stockfish", Spec{Cmd: "/usr/games/stockfish"}},
		{Verify, "./myengine", Spec{Cmd: "./myengine"}},
		{Verify, "cmd=./perft.sh,proto=perftree", Spec{Cmd: "./perft.sh", Proto: Perftree}},
		{Verify, "cmd=./brokenperft,args=-bug ep", Spec{Cmd: "./brokenperft", Args: []string{"-bug", "ep"}}},
		{Verify, "cmd=./brokenperft,args=-bug underpromo,castle-through-check", Spec{Cmd: "./brokenperft", Args: []string{"-bug", "underpromo,castle-through-check"}}},
		{Verify, "cmd=./bp,args=-bug underpromo,castle-through-check -perftree,proto=perftree", Spec{Cmd: "./bp", Args: []string{"-bug", "underpromo,castle-through-check", "-perftree"}, Proto: Perftree}},
		{Verify, "cmd=/usr/games/stockfish,option.Threads=1", Spec{Cmd: "/usr/games/stockfish", Options: opts("Threads", "1")}},
		{Verify, "cmd=/usr/games/stockfish,args=-a -b,option.Hash=16,option.Threads=1", Spec{Cmd: "/usr/games/stockfish", Args: []string{"-a", "-b"}, Options: opts("Hash", "16", "Threads", "1")}},
		{Verify, "name=sf,cmd=/usr/games/stockfish,option.Hash=16", Spec{Name: "sf", Cmd: "/usr/games/stockfish", Options: opts("Hash", "16")}},
		{Verify, "name=sf", Spec{Name: "sf"}},
		{Verify, "name=brokenperft,args=-bug 960-king-stays,960-rook-dest", Spec{Name: "brokenperft", Args: []string{"-bug", "960-king-stays,960-rook-dest"}}},
		{Verify, "cmd=./myengine,args=--perft-mode", Spec{Cmd: "./myengine", Args: []string{"--perft-mode"}}},
		{Verify, "cmd=/opt/myengine/myengine,dir=/tmp", Spec{Cmd: "/opt/myengine/myengine", Dir: "/tmp"}},
		{Verify, "cmd=./bp,args=-bug a,b,proto=perftree", Spec{Cmd: "./bp", Args: []string{"-bug", "a,b"}, Proto: Perftree}},
	} {
		got, err := Parse(c.in, c.use)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) =\n  %#v\nwant\n  %#v", c.in, got, c.want)
		}
	}
}

// Values with commas, quotes, blanks and Windows paths.
func TestQuoting(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Spec
	}{
		{`cmd=./bp,args="-bug a,b"`, Spec{Cmd: "./bp", Args: []string{"-bug", "a,b"}}},
		{`cmd=./bp,args=-bug\,a`, Spec{Cmd: "./bp", Args: []string{"-bug,a"}}},
		{`cmd=./bp,args=-bug a\,b,proto=perftree`, Spec{Cmd: "./bp", Args: []string{"-bug", "a,b"}, Proto: Perftree}},
		{`cmd=./e,arg=my book.bin,arg="x, y"`, Spec{Cmd: "./e", Args: []string{"my book.bin", "x, y"}}},
		{`cmd=./e,option.SyzygyPath="/tb/a,/tb/b"`, Spec{Cmd: "./e", Options: opts("SyzygyPath", "/tb/a,/tb/b")}},
		{`cmd=C:\engines\sf.exe,dir=C:\engines`, Spec{Cmd: `C:\engines\sf.exe`, Dir: `C:\engines`}},
		{`cmd="./my engine",option.Say="he said ""hi"""`, Spec{Cmd: "./my engine", Options: opts("Say", `he said "hi"`)}},
		{`cmd=./e,option.Say=a\"b`, Spec{Cmd: "./e", Options: opts("Say", `a"b`)}},
		{`cmd="C:\x\",dir="\\server\share"`, Spec{Cmd: `C:\x\`, Dir: `\\server\share`}},
		{`cmd=./e,arg=""`, Spec{Cmd: "./e", Args: []string{""}}},
		{`cmd=./e,option.Expr="a=b"`, Spec{Cmd: "./e", Options: opts("Expr", "a=b")}},
		{` cmd = ./e , option.Hash = 16 `, Spec{Cmd: "./e", Options: opts("Hash", "16")}},
		{`cmd=./e,option.Pad="  "`, Spec{Cmd: "./e", Options: opts("Pad", "  ")}},
		{`cmd=./e,option.Hash=1,option.hash=2`, Spec{Cmd: "./e", Options: opts("hash", "2")}},
	} {
		got, err := Parse(c.in, Verify)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) =\n  %#v\nwant\n  %#v", c.in, got, c.want)
		}
	}
}

// Errors name the key and the bad value, and quote at most ~100 bytes.
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		use       Use
		in, wants string
	}{
		{Match, "", "empty"},
		{Match, "name=a,cmd=x,colour=red", `unknown key "colour"`},
		{Match, "name=a,cmd=x,red", `item "red" is not key=value`},
		{Match, "cmd=x", "missing name="},
		{Match, "name=a", "missing cmd= (or builtin)"},
		{Match, "name=a,builtin,cmd=x", "builtin and cmd= exclude each other"},
		{Match, "name=a,builtin,args=-x", "takes no args="},
		{Match, "name=a,cmd=x,proto=perftree", `proto="perftree": want uci, xboard, builtin`},
		{Match, "name=a,cmd=x,proto=xboard,builtin", "exclude each other"},
		{Match, "name=a,cmd=x,builtin=yes", "builtin takes no value"},
		{Match, "name=a,cmd=x,tc=10+x", `tc="10+x"`},
		{Match, "name=a,cmd=x,st=0", `st="0"`},
		{LocalMatch, "proto=xboard", `engine "proto=xboard": missing cmd=`},
		{LocalMatch, "builtin,args=-x", "takes no args="},
		{Match, "name=a,name=b,cmd=x", "name= given twice"},
		{Match, "name=,cmd=x", "empty name"},
		{Match, "name=a,cmd=x,option.=1", "option. without a name"},
		{Match, "name=a,cmd=x,,option.Hash=1", "empty item between commas"},
		{Match, `name=a,cmd="x`, "not closed"},
		{Each, "name=a,tc=1", "name= belongs to one engine"},
		{Each, "builtin", "builtin= belongs to one engine"},
		{Each, "nodez=10", `unknown key "nodez"`},
		{Verify, "cmd=x,proto=xboard", `proto="xboard": want uci, perftree`},
		{Verify, "cmd=x,colour=red", `unknown key "colour"`},
		{Verify, "name=a,builtin", "the embedded engine cannot be used here"},
		{Verify, "cmd=x,proto=perftree,option.Hash=1", "option.* needs proto=uci"},
		{Verify, "cmd=x,nodes=10", "nodes= is a match time control"},
		{Verify, "cmd=x,option.Hash=1\nquit", "line break"},
		{Verify, "args=x", "no cmd=PATH"},
		{Verify, "", "empty"},
	} {
		_, err := Parse(c.in, c.use)
		if err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("Parse(%q) = %v, want an error mentioning %s", c.in, err, c.wants)
		}
	}
	long := "name=a,cmd=x,colour=" + strings.Repeat("r", 5000)
	_, err := Parse(long, Match)
	if err == nil || len(err.Error()) > 400 {
		t.Errorf("error for a 5 kB spec is %d bytes: %v", len(err.Error()), err)
	}
}

// String renders a spec that parses back to itself.
func TestStringRoundTrip(t *testing.T) {
	for _, s := range []Spec{
		{Name: "a", Cmd: "/usr/games/stockfish", Options: opts("Hash", "16", "Skill Level", "3")},
		{Name: "b", Proto: Builtin, Options: opts("RFPMargin", "80")},
		{Name: "c, d", Cmd: `C:\x y\e.exe`, Args: []string{"-bug", "a,b", "my book", ""}, Dir: "/tmp/x=y", Proto: Xboard, Limits: opts("tc", "40/60+0.5", "nodes", "100")},
		{Name: "q", Cmd: "e", Options: opts("Say", `"quoted", yes`)},
	} {
		got, err := Parse(s.String(), Match)
		if err != nil {
			t.Errorf("Parse(%q): %v", s.String(), err)
			continue
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("Parse(%q) =\n  %#v\nwant\n  %#v", s.String(), got, s)
		}
	}
}

// maxParseError bounds a Parse error: at most three quotes of the input (the
// spec, a key, a value), each at most maxQuote bytes escaped plus its length
// note, and the fixed text around them. Before quotes were bounded escaped,
// a 173-byte spec of invalid bytes made a 1,064-byte error (testdata/fuzz:
// escaped-bytes-in-option-name-and-value): each byte escapes to four.
const maxParseError = 3*(maxQuote+len(`""… (1000 bytes)`)) + 300

func FuzzParse(f *testing.F) {
	for _, s := range []string{"name=a,cmd=x,args=\"a,b\",option.H=1", `cmd=x,args=-bug\,a,b`, "name=a,builtin,tc=10+0.1", `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, use := range []Use{Match, Each, Verify} {
			s, err := Parse(in, use)
			if err != nil {
				if len(err.Error()) > maxParseError {
					t.Fatalf("Parse(%q): error of %d bytes: %s", in, len(err.Error()), err)
				}
				continue
			}
			back, err := Parse(s.String(), use)
			if err != nil || !reflect.DeepEqual(back, s) {
				t.Fatalf("Parse(%q) = %#v, whose String %q parses to %#v, %v", in, s, s.String(), back, err)
			}
		}
	})
}

func TestMatchEngine(t *testing.T) {
	each, err := Parse("tc=10+0.1,option.Hash=16,option.Threads=1,proto=uci", Each)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Parse("name=a,cmd=/e,args=-x,dir=/d,option.hash=32,nodes=500", Match)
	if err != nil {
		t.Fatal(err)
	}
	e, err := a.MatchEngine(each)
	if err != nil {
		t.Fatal(err)
	}
	want := match.EngineConfig{Name: "a", Cmd: "/e", Args: []string{"-x"}, Dir: "/d", Proto: "uci",
		Options: []match.Option{{Name: "Threads", Value: "1"}, {Name: "hash", Value: "32"}},
		Limits:  match.Limits{Base: 10 * time.Second, Inc: 100 * time.Millisecond, Nodes: 500}}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("MatchEngine =\n  %#v\nwant\n  %#v", e, want)
	}
	// Without limits of its own an engine plays the match's.
	b, _ := Parse("name=b,builtin,option.RFPMargin=80", Match)
	e, err = b.MatchEngine(each)
	if err != nil || e.Proto != "builtin" || e.Cmd != "" || e.Limits != (match.Limits{}) || len(e.Options) != 3 {
		t.Errorf("builtin MatchEngine = %#v, %v", e, err)
	}
	// A later tc= keeps the earlier increment, as it always did: --each
	// tc=10+0.1 and the engine's tc=5 give 5+0.1.
	c, _ := Parse("name=c,cmd=/e,tc=5,st=0.02", Match)
	e, err = c.MatchEngine(each)
	if err != nil || e.Limits != (match.Limits{Base: 5 * time.Second, Inc: 100 * time.Millisecond, MoveTime: 20 * time.Millisecond}) {
		t.Errorf("MatchEngine limits = %+v, %v", e.Limits, err)
	}
}

func TestVerifyAndProto(t *testing.T) {
	s, _ := Parse("cmd=/e,args=-a,option.Hash=1,dir=/d", Verify)
	want := verify.EngineSpec{Cmd: "/e", Args: []string{"-a"}, Proto: verify.ProtoUCI, Options: []verify.Option{{Name: "Hash", Value: "1"}}, Dir: "/d"}
	if got := s.VerifyEngine(); !reflect.DeepEqual(got, want) {
		t.Errorf("VerifyEngine = %#v", got)
	}
	b, _ := Parse("name=b,builtin,option.RFPMargin=80", Match)
	p := b.ToProto()
	if p.GetCommand() != "embedded" || p.GetProtocol() != "builtin" || p.GetOptions()["RFPMargin"] != "80" {
		t.Errorf("ToProto = %v", p)
	}
	if back := FromProto(p); back.Proto != Builtin || back.Cmd != "" || back.Name != "b" {
		t.Errorf("FromProto = %#v", back)
	}
	x := FromProto(&arbiterv1.EngineSpec{Name: "x", Command: "/e", Args: []string{"-a"}, Protocol: "xboard", Options: map[string]string{"b": "2", "a": "1"}})
	if x.String() != "name=x,cmd=/e,args=-a,proto=xboard,option.a=1,option.b=2" {
		t.Errorf("FromProto = %s", x)
	}
}
