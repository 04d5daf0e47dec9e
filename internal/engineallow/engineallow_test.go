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
			!slices.Equal(got.FileOptions, c.want.FileOptions) {
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
	})
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
	if _, _, err := New([]Engine{{Name: "a", Cmd: "/bin/true"}, {Name: "a", Cmd: "/bin/false"}}); err == nil {
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
