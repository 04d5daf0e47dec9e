package protocol

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseOption(t *testing.T) {
	for _, c := range []struct {
		line string
		want Option
	}{
		{"option name Skill Level type spin default 20 min -20 max 20",
			Option{Name: "Skill Level", Type: Spin, Default: "20", MinText: "-20", MaxText: "20", Min: -20, Max: 20, HasRange: true}},
		{"option name Clear Hash type button", Option{Name: "Clear Hash", Type: Button}},
		{"option name min max type spin default 3", Option{Name: "min max", Type: Spin, Default: "3"}},
		{"option name SyzygyPath type string default <empty>", Option{Name: "SyzygyPath", Type: String, Default: "<empty>"}},
		{"option name Book type string default my book var min.bin", Option{Name: "Book", Type: String, Default: "my book var min.bin"}},
		{"option name Ponder type check default false", Option{Name: "Ponder", Type: Check, Default: "false"}},
		{"option name Mode type combo default a b var a b var c", Option{Name: "Mode", Type: Combo, Default: "a b", Vars: []string{"a b", "c"}}},
		{"option name Scale type spin default 0.5 min 0 max 1",
			Option{Name: "Scale", Type: Spin, Default: "0.5", MinText: "0", MaxText: "1", HasRange: true, Real: true, MaxReal: 1}},
	} {
		got, err := ParseOption(c.line)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q: %+v %v, want %+v", c.line, got, err, c.want)
		}
	}
	manyVars := "option name V type combo default v" + strings.Repeat(" var v", maxVars+1)
	for line, why := range map[string]string{
		"option name X type spin default 1 min a max 3":     `spin min "a" is not a number`,
		"option name X type spin default 1 min 5 max 3":     "spin min 5 is above its max 3",
		"option name X type spin default 1 min 5":           "a spin with a min and no max",
		"option name X type spin default 1 min 0 max 1e999": `spin max "1e999" is not a number`,
		"option name X type spin default 2.5 min 3 max 1.5": "spin min 3 is above its max 1.5",
		"option name X type check default maybe":            "neither true nor false",
		"option name X type combo default a":                "a combo with no var",
		"option name X type slider default 1":               `unknown type "slider"`,
		"option name X":                                     "no type",
		"option type spin":                                  "no name",
		"info string option name X type spin":               "not an option line",
		manyVars:                                            fmt.Sprintf("more than %d vars", maxVars),
	} {
		_, err := ParseOption(line)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "option line ") {
			t.Errorf("%q: %v, want an error naming the line: %s", line, err, why)
		}
	}
}

// A value is checked by the option's type; the error names the option
// and the value.
func TestOptionsCheck(t *testing.T) {
	var s Options
	for _, l := range []string{
		"option name Hash type spin default 16 min 1 max 33554432",
		"option name Ponder type check default false",
		"option name Style type combo default Normal var Solid var Normal var Risky",
		"option name EvalFile type string default nn.nnue",
		"option name Clear Hash type button",
		"option name Broken type spin default 1 min 9 max 2",
		"option name Scale type spin default 0.5 min 0 max 1",
	} {
		s.AddLine(l)
	}
	if s.Len() != 6 || len(s.Malformed) != 1 {
		t.Fatalf("%d options, %d malformed (%v)", s.Len(), len(s.Malformed), s.Malformed)
	}
	for _, ok := range [][2]string{{"hash", "1"}, {"Hash", "33554432"}, {"Ponder", "true"}, {"style", "risky"},
		{"EvalFile", "/a b/c.nnue"}, {"Clear Hash", ""}, {"Scale", "0.25"}, {"Scale", "1"}} {
		if err := s.Check(ok[0], ok[1]); err != nil {
			t.Errorf("%s=%s: %v", ok[0], ok[1], err)
		}
	}
	for _, c := range []struct{ name, value, want string }{
		{"Hash", "0", `option "Hash"=0: out of range 1..33554432`},
		{"Hash", "99999999999999999999", `option "Hash"="99999999999999999999": want an integer`},
		{"Hash", "12MB", `option "Hash"="12MB": want an integer`},
		{"Scale", "1.5", `option "Scale"=1.5: out of range 0..1`},
		{"Scale", "half", `option "Scale"="half": want a number`},
		{"Ponder", "yes", `option "Ponder"="yes": want true or false`},
		{"Style", "Wild", `option "Style"="Wild": want one of Solid, Normal, Risky`},
		{"Threads", "1", `option "Threads": the engine has no such option (it has: Hash, Ponder, Style, EvalFile, Clear Hash, Scale)`},
		{"broken", "3", `option "broken": the engine's declaration of it is malformed: option line "option name Broken`},
	} {
		if err := s.Check(c.name, c.value); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: %v, want %q", c.name, c.value, err, c.want)
		}
	}
}

// An engine declaring options without end is capped: the set keeps
// maxOptions and counts the rest.
func TestOptionsCap(t *testing.T) {
	var s Options
	for i := range maxOptions + 10 {
		s.AddLine(fmt.Sprintf("option name O%d type spin default 0 min 0 max 1", i))
	}
	if s.Len() != maxOptions || s.Dropped() != 10 {
		t.Fatalf("kept %d, dropped %d", s.Len(), s.Dropped())
	}
	// A name declared twice keeps its first declaration, once (as
	// fastchess does).
	var d Options
	d.AddLine("option name Hash type spin default 1 min 1 max 64")
	d.AddLine("option name HASH type spin default 1 min 1 max 2")
	if d.Len() != 1 || d.Check("hash", "64") != nil {
		t.Fatalf("%+v", d.List())
	}
}

func TestXboardOption(t *testing.T) {
	for v, want := range map[string]Option{
		"Resign Threshold -spin 800 200 1200":      {Name: "Resign Threshold", Type: Spin, Default: "800", MinText: "200", MaxText: "1200", Min: 200, Max: 1200, HasRange: true, xboard: true},
		"Ponder -check 0":                          {Name: "Ponder", Type: Check, Default: "0", xboard: true},
		"Style -combo Solid /// *Normal /// Risky": {Name: "Style", Type: Combo, Default: "Normal", Vars: []string{"Solid", "Normal", "Risky"}, xboard: true},
		"Book File -file book.bin":                 {Name: "Book File", Type: String, Default: "book.bin", xboard: true},
		"Clear Hash -button":                       {Name: "Clear Hash", Type: Button, xboard: true},
	} {
		got, err := ParseXboardOption(v)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: %+v %v, want %+v", v, got, err, want)
		}
	}
	for _, v := range []string{"-spin 1 2 3", "X -spin 1 2", "X -dial 3", "X -spin 1 5 2"} {
		if _, err := ParseXboardOption(v); err == nil || !strings.Contains(err.Error(), strings.TrimSpace(v)) {
			t.Errorf("%q: %v, want an error quoting it", v, err)
		}
	}
	o, _ := ParseXboardOption("Ponder -check 0")
	if o.Check("1") != nil || o.Check("true") != nil {
		t.Error("an xboard check refuses 1 or true")
	}
	if err := o.Check("2"); err == nil || !strings.Contains(err.Error(), `option "Ponder"="2": want 0 or 1`) {
		t.Errorf("Ponder=2: %v", err)
	}
}

func TestFeatures(t *testing.T) {
	f := ParseFeatures(`feature myname="Fairy-Max 5.0b" setboard=0 ping=1 option="Resign Threshold -spin 800 200 1200" done=0`)
	if len(f) != 5 || f[0][1] != "Fairy-Max 5.0b" || f[3][1] != "Resign Threshold -spin 800 200 1200" {
		t.Fatalf("%q", f)
	}
}

// FuzzParseOption: any line parses or is refused with an error naming
// it; never a panic; a spin that parses has min <= max.
func FuzzParseOption(f *testing.F) {
	for _, s := range []string{"option name Hash type spin default 16 min 1 max 1024", "option name a type combo var",
		"option name type type type", "option name X type spin min -9223372036854775808 max 9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		o, err := ParseOption(line)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "option line ") {
				t.Fatalf("%q: error %v does not name the line", line, err)
			}
			return
		}
		if o.HasRange && o.Min > o.Max {
			t.Fatalf("%q: min %d > max %d", line, o.Min, o.Max)
		}
		if len(o.Vars) > maxVars {
			t.Fatalf("%q: %d vars", line, len(o.Vars))
		}
	})
}
