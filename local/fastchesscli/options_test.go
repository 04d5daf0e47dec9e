package fastchesscli

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/match"
)

// optionsCommand gives engine A options that Stockfish does not declare,
// takes in no other case, refuses the value of, or cannot read as a
// number; B sets Hash only.
const optionsCommand = "-engine cmd={SF} name=A option.Ponder=yes option.hash=3 option.Clear_Hash=false option.Move_Overhead=5000000000 option.Threads=1 -engine cmd={SF} name=B option.Hash=8 -each nodes=300 -rounds 1 -games 2 -repeat -ratinginterval 1 -autosaveinterval 0"

// optionsWant are the lines fastchess 1.8.2 prints for optionsCommand
// (its warnings before each game, White's engine first, and the report
// header with the values the engines hold), checked against the real
// fastchess when it is installed.
var optionsWant = []string{
	"Started game 1 of 2 (A vs B)",
	"Warning; Invalid value for option Ponder; yes",
	"Warning; A doesn't have option hash",
	"Warning; Invalid value for option Clear Hash; false",
	"Warning; Failed to set option Move Overhead with value 5000000000 for engine A: stoi",
	"Started game 2 of 2 (B vs A)",
	"Warning; Invalid value for option Ponder; yes",
	"Warning; A doesn't have option hash",
	"Warning; Invalid value for option Clear Hash; false",
	"Warning; Failed to set option Move Overhead with value 5000000000 for engine A: stoi",
	"Results of A vs B (300 nodes, 1t, 16MB - 8MB):",
	"Finished match",
}

// optionLines keeps the lines of out that optionsWant speaks of.
func optionLines(out string) []string {
	var l []string
	for _, s := range strings.Split(out, "\n") {
		if strings.HasPrefix(s, "Started game") || strings.HasPrefix(s, "Warning;") || strings.HasPrefix(s, "Results of") || s == "Finished match" {
			l = append(l, s)
		}
	}
	return l
}

func optionsArgs(t *testing.T, dir string) []string {
	args := substitute(t, optionsCommand, dir)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "_", " ") // option names with a blank
	}
	return args
}

// TestFastchessOptionWarnings: an option an engine cannot take is not a
// refusal in fastchess mode: fastchess's warning line, before every game
// the engine plays, and the match goes on (exit 0); the report header
// shows the Threads and Hash the engines hold (1t and 16MB are
// Stockfish's defaults, not NULL). With -strict the first warning stops
// the match (after the game pair it was printed in: fastchess stops
// within the game).
func TestFastchessOptionWarnings(t *testing.T) {
	needEngines(t)
	dir := t.TempDir()
	t.Chdir(dir)
	args := optionsArgs(t, dir)
	if got := optionLines(mustRun(t, args)); !slices.Equal(got, optionsWant) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(optionsWant, "\n"))
	}
	checkStrictStops(t, args, "game 1: Warning; Invalid value for option Ponder; yes")
}

// TestFastchessOptionWarningsAsFastchess runs optionsCommand with the real
// fastchess: the lines optionsWant keeps are its.
func TestFastchessOptionWarningsAsFastchess(t *testing.T) {
	needEngines(t)
	bin := fastchessBinary(t)
	dir := t.TempDir()
	t.Chdir(dir)
	out, err := exec.Command(bin, optionsArgs(t, dir)...).CombinedOutput()
	if err != nil {
		t.Fatalf("fastchess: %v\n%s", err, out)
	}
	if got := optionLines(string(out)); !slices.Equal(got, optionsWant) {
		t.Errorf("fastchess printed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(optionsWant, "\n"))
	}
}

// TestChooseOptions: fastchess's choice over declared options, by exact
// name, Threads first, with its spin, check, combo and button rules.
func TestChooseOptions(t *testing.T) {
	declared := []match.DeclaredOption{
		{Name: "Hash", Type: "spin", Default: "16", Min: "1", Max: "1024"},
		{Name: "Threads", Type: "spin", Default: "1", Min: "1", Max: "64"},
		{Name: "Ponder", Type: "check", Default: "false"},
		{Name: "Style", Type: "combo", Default: "Normal", Vars: []string{"Solid", "Normal"}},
		{Name: "Clear Hash", Type: "button"},
		{Name: "Scale", Type: "spin", Default: "0.5", Min: "0.0", Max: "1.0"},
		{Name: "Odd", Type: "weird"},
	}
	given := []match.Option{
		{Name: "Hash", Value: "64abc"}, {Name: "Threads", Value: "2"}, {Name: "Ponder", Value: "True"},
		{Name: "Style", Value: "Solid"}, {Name: "Clear Hash", Value: "true"}, {Name: "Scale", Value: "x"},
		{Name: "Odd", Value: "1"}, {Name: "threads", Value: "3"}, {Name: "Hash", Value: "2048"},
	}
	send, problems, values := chooseOptions(declared, given)
	var sent []string
	for _, o := range send {
		sent = append(sent, o.Name+"="+o.Value)
	}
	if want := []string{"Threads=2", "Hash=64abc", "Style=Solid", "Clear Hash=true"}; !slices.Equal(sent, want) {
		t.Errorf("sent %q, want %q", sent, want)
	}
	var warned []string
	for _, p := range problems {
		warned = append(warned, p.warning("E"))
	}
	if want := []string{
		"Warning; Invalid value for option Ponder; True",
		"Warning; Failed to set option Scale with value x for engine E: stod",
		"Warning; E doesn't have option Odd",
		"Warning; E doesn't have option threads",
		"Warning; Invalid value for option Hash; 2048",
	}; !slices.Equal(warned, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warned, "\n"), strings.Join(want, "\n"))
	}
	if values["Hash"] != "64" || values["Threads"] != "2" || values["Scale"] != "0.500000" {
		t.Errorf("values %v: want Hash 64 (stoi's reading of 64abc), Threads 2, Scale 0.500000", values)
	}
}
