package engineallow

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseEntry(t *testing.T) {
	cases := []struct {
		in   string
		want Engine
		err  string
	}{
		{in: "/usr/games/stockfish", want: Engine{Name: "stockfish", Cmd: "/usr/games/stockfish"}},
		{in: "name=sf,cmd=/usr/games/stockfish", want: Engine{Name: "sf", Cmd: "/usr/games/stockfish"}},
		{in: "name=ph,cmd=/usr/games/phalanx,args=-b- -l-", want: Engine{Name: "ph", Cmd: "/usr/games/phalanx", Args: []string{"-b-", "-l-"}}},
		{in: `name=sf,cmd=stockfish,options=SyzygyPath;Debug Log File`, want: Engine{Name: "sf", Cmd: "stockfish", FileOptions: []string{"SyzygyPath", "Debug Log File"}}},
		{in: "name=sf", err: "no program"},
		{in: "cmd=x,bogus=1", err: `unknown key "bogus"`},
		{in: "name=a b,cmd=x", err: "want a word"},
		{in: "cmd=x,args=a\nb", err: "control character"},
		{in: "name=sf,cmd=x,maxhash=4096,maxthreads=8", want: Engine{Name: "sf", Cmd: "x", Bounds: Bounds{MaxHashMB: 4096, MaxThreads: 8}}},
		{in: "cmd=x,maxhash=0", err: `maxhash="0": want a whole number in 1..`},
		{in: "cmd=x,maxthreads=-2", err: `maxthreads="-2": want a whole number`},
		{in: "cmd=x,maxhash=1e9", err: `maxhash="1e9"`},
		{in: "cmd=x,maxthreads=99999999999", err: `maxthreads="99999999999"`},
	}
	for _, c := range cases {
		got, err := ParseEntry(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got.Name != c.want.Name || got.Cmd != c.want.Cmd || !slices.Equal(got.Args, c.want.Args) ||
			!slices.Equal(got.FileOptions, c.want.FileOptions) || got.Bounds != c.want.Bounds {
			t.Errorf("%q: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestParseFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "allow")
	os.WriteFile(f, []byte("# engines of this machine\n\n/bin/true\nname=f,cmd=/bin/false\n"), 0o644)
	got, err := ParseFile(f)
	if err != nil || len(got) != 2 || got[0].Name != "true" || got[1].Name != "f" {
		t.Fatalf("%+v %v", got, err)
	}
	os.WriteFile(f, []byte("/bin/true\nbogus=1\n"), 0o644)
	if _, err := ParseFile(f); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad line: %v", err)
	}
}

func TestResolve(t *testing.T) {
	l, missing, err := New([]Engine{
		{Name: "true", Cmd: "/bin/true"},
		{Name: "ph", Cmd: "/bin/false", Args: []string{"-b-"}},
		{Name: "ph", Cmd: "/bin/false", Args: []string{"-x"}},
		{Name: "later", Cmd: "/no/such/engine"},
	}, Bounds{})
	if err != nil || !slices.Equal(missing, []string{"/no/such/engine"}) {
		t.Fatalf("New: %v, missing %v", err, missing)
	}
	ok := []struct {
		cmd  string
		args []string
		want string
	}{
		{"true", nil, "/bin/true"},
		{"/bin/true", nil, "/bin/true"},
		{"/bin/../bin/true", nil, "/bin/true"},
		{"ph", nil, "/bin/false"},
		{"ph", []string{"-x"}, "/bin/false"},
		{"later", nil, "/no/such/engine"},
	}
	for _, c := range ok {
		e, err := l.Resolve(c.cmd, c.args, "")
		if err != nil || e.Cmd != c.want {
			t.Errorf("Resolve(%q, %q) = %+v, %v", c.cmd, c.args, e, err)
		}
	}
	if e, _ := l.Resolve("ph", []string{"-x"}, ""); !slices.Equal(e.Args, []string{"-x"}) {
		t.Errorf("args choose among entries of one name: %+v", e)
	}
	bad := []struct {
		cmd  string
		args []string
		dir  string
		want string
	}{
		{"/bin/sh", []string{"-c", "cat /etc/passwd"}, "", `"/bin/sh" is not allowed`},
		{"sh", nil, "", "not allowed"},
		{"true", []string{"--evil"}, "", "the worker's operator sets them"},
		{"true", nil, "/tmp", "working directory"},
		{"bin/true", nil, "", "not allowed"},
	}
	for _, c := range bad {
		if _, err := l.Resolve(c.cmd, c.args, c.dir); err == nil || !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%q, %q, %q): %v, want %q", c.cmd, c.args, c.dir, err, c.want)
		}
	}
	var none *List
	if _, err := none.Resolve("true", nil, ""); err == nil || !strings.Contains(err.Error(), "--engine-allow") {
		t.Errorf("empty list: %v", err)
	}
	if _, _, err := New([]Engine{{Name: "a", Cmd: "/bin/true"}, {Name: "a", Cmd: "/bin/false"}}, Bounds{}); err == nil {
		t.Error("a name given twice with the same arguments was accepted")
	}
}

func TestFileOptions(t *testing.T) {
	for _, c := range []struct {
		name, value string
		file        bool
	}{
		{"Debug Log File", "x.log", true},
		{"SyzygyPath", "/tb", true},
		{"EvalFile", "nn.nnue", true},
		{"BookFile", "", true},
		{"NNUE dir", "x", true},
		{"Threads", "4", false},
		{"OwnBook", "false", false},
		{"Hash", "16", false},
		{"UCI_Opponent", "none 2800 computer a/b", true},
		{"Skill Level", `..\x`, true},
	} {
		if got := NamesFile(c.name, c.value); got != c.file {
			t.Errorf("NamesFile(%q, %q) = %v", c.name, c.value, got)
		}
	}
	e := Engine{Name: "sf", FileOptions: []string{"syzygy path"}}
	if err := e.CheckOptions(map[string]string{"SyzygyPath": "/tb", "Hash": "16"}); err != nil {
		t.Errorf("allowed option refused: %v", err)
	}
	err := e.CheckOptions(map[string]string{"Debug Log File": "/tmp/x", "Hash": "16"})
	if err == nil || !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "Debug Log File") {
		t.Errorf("Debug Log File: %v", err)
	}
}

// TestBounds: Hash and Threads above the worker's bounds (or an entry's
// own, which override them) are refused naming the bound and the setting
// that raises it; values within them, and other options, pass (the
// control); without bounds (arbiter up's own engines) nothing is bounded.
func TestBounds(t *testing.T) {
	l, _, err := New([]Engine{
		{Name: "sf", Cmd: "/bin/true"},
		{Name: "big", Cmd: "/bin/false", Bounds: Bounds{MaxHashMB: 4096}},
	}, Bounds{MaxHashMB: 64, MaxThreads: 2})
	if err != nil {
		t.Fatal(err)
	}
	sf, _ := l.Resolve("sf", nil, "")
	big, _ := l.Resolve("big", nil, "")
	if sf.Bounds != (Bounds{MaxHashMB: 64, MaxThreads: 2}) || big.Bounds != (Bounds{MaxHashMB: 4096, MaxThreads: 2}) {
		t.Fatalf("bounds: sf %+v, big %+v", sf.Bounds, big.Bounds)
	}
	for _, c := range []struct {
		e    Engine
		opts map[string]string
		want string // "" passes
	}{
		{sf, map[string]string{"Hash": "64", "Threads": "2", "Skill Level": "20"}, ""},
		{sf, map[string]string{"Hash": "1", "threads": " 1 "}, ""},
		{big, map[string]string{"Hash": "4096"}, ""},
		{sf, map[string]string{"Hash": "33554432"}, `engine "sf": option Hash=33554432 MB is not allowed on this worker: above its operator's bound of 64 MB (--engine-max-hash, or maxhash= in --engine-allow)`},
		{sf, map[string]string{"hash": "65"}, "above its operator's bound of 64 MB"},
		{sf, map[string]string{"Threads": "1024"}, `option Threads=1024 is not allowed on this worker: above its operator's bound of 2 (--engine-max-threads, or maxthreads= in --engine-allow)`},
		{sf, map[string]string{"T hreads": "3"}, "bound of 2"},
		{big, map[string]string{"Hash": "4097"}, "bound of 4096 MB"},
		{sf, map[string]string{"Hash": "lots"}, `option Hash="lots" is not allowed on this worker: this worker bounds Hash and takes a whole number in 1..64 MB`},
		{sf, map[string]string{"Threads": "0"}, "whole number in 1..2"},
		{sf, map[string]string{"Hash": "99999999999999999999"}, "whole number in 1..64"},
	} {
		err := c.e.CheckOptions(c.opts)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s %v: %v, want it to pass", c.e.Name, c.opts, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.e.Name, c.opts, err, c.want)
		}
	}
	free, _, _ := New([]Engine{{Name: "sf", Cmd: "/bin/true"}}, Bounds{})
	e, _ := free.Resolve("sf", nil, "")
	if err := e.CheckOptions(map[string]string{"Hash": "33554432", "Threads": "1024"}); err != nil {
		t.Errorf("without bounds: %v", err)
	}
}
