package fastchesscli

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/arbiter-chess/arbiter/match"
)

// fastchess does not refuse an engine for its options: before every game
// it sets each option the engine declared (by its exact name) to a value
// the declaration allows, prints a warning line for every other, and
// plays on (app/src/engine/uci_engine.cpp, sendSetoption and refreshUci,
// fastchess 1.8). Fishtest's worker stops a run on those lines, so they
// keep fastchess's words:
//
//	Warning; ENGINE doesn't have option NAME
//	Warning; Invalid value for option NAME; VALUE
//	Warning; Failed to set option NAME with value VALUE for engine ENGINE: stoi
//
// The report header shows each engine's Threads and Hash as the engine
// holds them: its declared default unless it was set, NULL when it
// declares no such option.

// optionProblem is an option fastchess would not set, and why.
type optionProblem struct {
	name, value string
	// kind: "missing" (not declared), "invalid" (a value the declaration
	// refuses), or the C++ conversion that threw on the value ("stoi",
	// "stod": fastchess's spin options parse with them).
	kind string
}

func (p optionProblem) warning(engine string) string {
	switch p.kind {
	case "missing":
		return fmt.Sprintf("Warning; %s doesn't have option %s", engine, p.name)
	case "invalid":
		return fmt.Sprintf("Warning; Invalid value for option %s; %s", p.name, p.value)
	}
	return fmt.Sprintf("Warning; Failed to set option %s with value %s for engine %s: %s", p.name, p.value, engine, p.kind)
}

// engineOptions keeps, for each engine of the match by index, what the
// last start of its process made of its options: the problems (printed
// with every game the engine plays, as fastchess prints them) and the
// Threads and Hash values in effect.
type engineOptions struct {
	mu       sync.Mutex
	problems [][]optionProblem
	threads  []string // "1t", or "NULL" when not declared; "" before the engine started
	hash     []string // "16MB", or "NULL"
}

func newEngineOptions(n int) *engineOptions {
	return &engineOptions{problems: make([][]optionProblem, n), threads: make([]string, n), hash: make([]string, n)}
}

// chooser is engine i's match.EngineConfig.ChooseOptions: fastchess's
// choice of the options to send.
func (e *engineOptions) chooser(i int) func([]match.DeclaredOption, []match.Option) []match.Option {
	return func(declared []match.DeclaredOption, given []match.Option) []match.Option {
		send, problems, values := chooseOptions(declared, given)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.problems[i] = problems
		e.threads[i], e.hash[i] = "NULL", "NULL"
		if v, ok := values["Threads"]; ok {
			e.threads[i] = v + "t"
		}
		if v, ok := values["Hash"]; ok {
			e.hash[i] = v + "MB"
		}
		return send
	}
}

// warnings are engine i's warning lines, named engine.
func (e *engineOptions) warnings(i int, engine string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, p := range e.problems[i] {
		out = append(out, p.warning(engine))
	}
	return out
}

// header is engine i's Threads and Hash for the report header; ok false
// when the engine has not been started by the match (a builtin or xboard
// engine, whose options fastchess would not know).
func (e *engineOptions) header(i int) (threads, hash string, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.threads[i], e.hash[i], e.threads[i] != ""
}

// chooseOptions is fastchess's refreshUci over the given options: Threads
// first, then each in order; the options to send, the problems, and every
// declared option's value in effect afterwards, by name.
func chooseOptions(declared []match.DeclaredOption, given []match.Option) (send []match.Option, problems []optionProblem, values map[string]string) {
	values = map[string]string{}
	byName := map[string]match.DeclaredOption{}
	for _, d := range declared {
		if _, dup := byName[d.Name]; dup || !knownType(d.Type) {
			continue // fastchess keeps the first; it drops a type it does not know
		}
		byName[d.Name] = d
		if v, err := optionValue(d, d.Default); err == nil {
			values[d.Name] = v
		}
	}
	given = slices.Clone(given)
	slices.SortStableFunc(given, func(a, b match.Option) int {
		return boolRank(a.Name != "Threads") - boolRank(b.Name != "Threads")
	})
	for _, o := range given {
		d, ok := byName[o.Name]
		if !ok {
			problems = append(problems, optionProblem{o.Name, o.Value, "missing"})
			continue
		}
		v, err := optionValue(d, o.Value)
		if err != nil {
			problems = append(problems, optionProblem{o.Name, o.Value, err.Error()})
			continue
		}
		values[d.Name] = v
		send = append(send, o)
	}
	return send, problems, values
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func knownType(t string) bool {
	switch t {
	case "check", "spin", "combo", "button", "string":
		return true
	}
	return false
}

// errInvalid: the declaration refuses the value. Any other error is the
// name of the C++ conversion that threw.
var errInvalid = errors.New("invalid")

// optionValue is value as fastchess's option d holds it once set
// (isValid, then getValue), or why it cannot be set.
func optionValue(d match.DeclaredOption, value string) (string, error) {
	switch d.Type {
	case "check":
		if value != "true" && value != "false" {
			return "", errInvalid
		}
	case "button":
		if value != "true" {
			return "", errInvalid
		}
	case "combo":
		if !slices.Contains(d.Vars, value) {
			return "", errInvalid
		}
	case "spin":
		// fastchess reads a spin as an int when its default, min and max
		// all read as integers, else as a double.
		if isInt(d.Default) && isInt(d.Min) && isInt(d.Max) {
			return spinValue(d, value, cppStoi, "stoi", func(n int64) string { return strconv.FormatInt(n, 10) })
		}
		return spinValue(d, value, cppStod, "stod", func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) })
	}
	return value, nil
}

// spinValue reads value as the spin d reads it (parse, the C++ conversion
// named conv) and checks it against d's range; format is getValue.
func spinValue[T int64 | float64](d match.DeclaredOption, value string, parse func(string) (T, bool), conv string, format func(T) string) (string, error) {
	lo, _ := parse(d.Min)
	hi, _ := parse(d.Max)
	v, ok := parse(value)
	if !ok {
		return "", errors.New(conv)
	}
	if v < lo || v > hi {
		return "", errInvalid
	}
	return format(v), nil
}

// isInt is fastchess's isInteger: the whole string reads as an int.
func isInt(s string) bool {
	n, err := strconv.ParseInt(strings.TrimLeft(s, " \t\n\v\f\r"), 10, 32)
	return err == nil && n >= math.MinInt32 && n <= math.MaxInt32
}

// cppStoi is std::stoi: leading blanks, a sign, then the longest run of
// digits (the rest ignored); false when there are no digits or the value
// does not fit an int (std::stoi throws).
func cppStoi(s string) (int64, bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:end], 10, 32)
	return n, err == nil
}

// cppStod is std::stod on the common forms: the longest prefix that reads
// as a decimal number.
func cppStod(s string) (float64, bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	for end := len(s); end > 0; end-- {
		if x, err := strconv.ParseFloat(s[:end], 64); err == nil {
			return x, true
		}
	}
	return 0, false
}
