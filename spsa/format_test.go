package spsa

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Both sites' formats are read, one parameter a line or a semicolon.
func TestParseParams(t *testing.T) {
	in := `# search constants
RFPMargin, 75, 20, 300, 5, 0.002
AspWindow,int,20,5,200,3,0.0020;LMRBase, int, 75, 0, 300, 10, 2e-3

Scale, float, 0.5, 0, 1, 0.05, 0.01`
	ps, err := ParseParams(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Param{
		{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002},
		{Name: "AspWindow", Start: 20, Min: 5, Max: 200, CEnd: 3, REnd: 0.002},
		{Name: "LMRBase", Start: 75, Min: 0, Max: 300, CEnd: 10, REnd: 0.002},
		{Name: "Scale", Float: true, Start: 0.5, Min: 0, Max: 1, CEnd: 0.05, REnd: 0.01},
	}
	if len(ps) != len(want) {
		t.Fatalf("%d params: %+v", len(ps), ps)
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("param %d: %+v, want %+v", i, ps[i], want[i])
		}
	}
}

// Every bad list is refused with the line, the parameter and the field.
func TestParseParamsRefusals(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "params: none given"},
		{"A,1,0,10,1", `params line 1: "A,1,0,10,1" has 5 fields: want Fishtest's 6`},
		{"A,1,0,10,1,0.002;B,int,1,0,10,1,0.002,9", "params line 2"},
		{"A,double,1,0,10,1,0.002", `param "A": type "double": want int or float`},
		{"A,x,0,10,1,0.002", `param "A": start "x" is not a number`},
		{"A,1,0,10,1,NaN", `param "A": r_end "NaN" is not a number`},
		{"A,1,20,10,1,0.002", `param "A": min 20 > max 10`},
		{"A,11,0,10,1,0.002", `param "A": start 11 is outside [min, max] = [0, 10]`},
		{"A,1,0,10,0,0.002", `param "A": c_end 0 must be positive`},
		{"A,1,0,10,-2,0.002", `param "A": c_end -2 must be positive`},
		{"A,1,0,10,1,0", `param "A": r_end 0 must be positive`},
		{",1,0,10,1,0.002", "name missing"},
		{"A,1,0,10,1,0.002\na,2,0,10,1,0.002", `param "a": named twice`},
		{strings.Repeat("x", MaxParamsText+1), "at most"},
		{strings.Repeat("A,1,0,10,1,0.002\n", 2) + strings.Repeat("x", 5000), "params line 3"},
	}
	for _, c := range cases {
		_, err := ParseParams(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: %v, want %q", c.in, err, c.want)
		} else if len(err.Error()) > 400 {
			t.Errorf("%.40q: a %d-byte error", c.in, len(err.Error()))
		}
	}
	var many strings.Builder
	for i := 0; i <= MaxParams; i++ {
		many.WriteString("P" + strconv.Itoa(i) + ",1,0,10,1,0.002\n")
	}
	if _, err := ParseParams(many.String()); err == nil || !strings.Contains(err.Error(), "more than 1000") {
		t.Errorf("1001 params: %v", err)
	}
}

// Export prints the tuned values in every format; Fishtest's and
// OpenBench's read back as the same parameters with the values as starts.
func TestExport(t *testing.T) {
	ps := []Param{
		{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002},
		{Name: "Move Overhead", Start: 10, Min: 0, Max: 5000, CEnd: 250, REnd: 0.002},
	}
	theta := []float64{81.6, 12.2}
	want := map[Format]string{
		Fishtest:  "RFPMargin,82,20,300,5,0.002\nMove Overhead,12,0,5000,250,0.002\n",
		OpenBench: "RFPMargin, int, 82, 20, 300, 5, 0.002\nMove Overhead, int, 12, 0, 5000, 250, 0.002\n",
		UCI:       "setoption name RFPMargin value 82\nsetoption name Move Overhead value 12\n",
		Options:   "option.RFPMargin=82,option.Move Overhead=12\n",
		Go: "// Tuned values: replace the rows of these names in engine/eval/weights.go or engine/search/params.go.\n" +
			"{Name: \"RFPMargin\", Default: 82, Min: 20, Max: 300, Step: 5},\n{Name: \"Move Overhead\", Default: 12, Min: 0, Max: 5000, Step: 250},\n",
	}
	for _, f := range Formats {
		got, err := Export(f, ps, theta)
		if err != nil || got != want[f] {
			t.Errorf("%s: %q %v\nwant %q", f, got, err, want[f])
		}
		if f == Fishtest || f == OpenBench {
			back, err := ParseParams(got)
			if err != nil {
				t.Fatalf("%s does not read back: %v", f, err)
			}
			for i := range back {
				if back[i].Start != Rounded(ps, theta)[i] || back[i].CEnd != ps[i].CEnd || back[i].Max != ps[i].Max {
					t.Errorf("%s read back %+v", f, back[i])
				}
			}
		}
	}
	if _, err := Export(Go, []Param{{Name: "F", Float: true, Start: 0.5, Max: 1, CEnd: 0.1, REnd: 0.1}}, []float64{0.5}); err == nil {
		t.Error("a real-valued parameter exported as a Go integer")
	}
	if _, err := ParseFormat("yaml"); err == nil || !strings.Contains(err.Error(), `format "yaml"`) {
		t.Errorf("format yaml: %v", err)
	}
	if f, err := ParseFormat(" OpenBench "); err != nil || f != OpenBench {
		t.Errorf("OpenBench: %v %v", f, err)
	}
}

// --params takes the engine's options, a file, or an inline list; every
// other value is refused with the value named.
func TestParseSource(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "params.txt")
	if err := os.WriteFile(file, []byte("RFPMargin, 75, 20, 300, 5, 0.002\nAspWindow, 20, 5, 200, 3, 0.002\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	builtin := func() ([]OptionDecl, error) { return BuiltinOptions() }
	cases := []struct {
		arg   string
		names []string
	}{
		{file, []string{"RFPMargin", "AspWindow"}},
		{"RFPMargin,int,75,20,300,5,0.002;AspWindow,int,20,5,200,3,0.002", []string{"RFPMargin", "AspWindow"}},
		{"from-engine:rfpmargin, AspWindow", []string{"RFPMargin", "AspWindow"}},
	}
	for _, c := range cases {
		s, err := ParseSource(c.arg, os.ReadFile)
		if err != nil {
			t.Fatalf("%s: %v", c.arg, err)
		}
		ps, err := s.Params(builtin)
		if err != nil {
			t.Fatalf("%s: %v", c.arg, err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, c.names) {
			t.Errorf("%s: %v", c.arg, got)
		}
	}
	if s, err := ParseSource("from-engine", os.ReadFile); err != nil || !s.FromEngine || s.Names != nil {
		t.Errorf("from-engine: %+v %v", s, err)
	}
	refused := []struct{ arg, want string }{
		{"", "params: empty"},
		{"from-engine:", "no option named"},
		{filepath.Join(dir, "missing.txt"), "no such file, and not a parameter list"},
		{dir, "params file"},
	}
	for _, r := range refused {
		if _, err := ParseSource(r.arg, os.ReadFile); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%q: %v", r.arg, err)
		}
	}
	// A list is checked against the engine when its options are known.
	s, _ := ParseSource("NoSuch,1,0,10,1,0.002", os.ReadFile)
	if _, err := s.Params(builtin); err == nil || !strings.Contains(err.Error(), `param "NoSuch": the engine has no option`) {
		t.Errorf("a parameter the engine lacks: %v", err)
	}
	if _, err := s.Params(nil); err != nil {
		t.Errorf("a list without the engine's options: %v", err)
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("A,1,0,10,1\n"), 0o644)
	s, _ = ParseSource(bad, os.ReadFile)
	if _, err := s.Params(nil); err == nil || !strings.Contains(err.Error(), "bad.txt: params line 1") {
		t.Errorf("a bad file: %v", err)
	}
	if _, err := (Source{FromEngine: true}).Params(nil); err == nil {
		t.Error("from-engine without the engine's options")
	}
}
