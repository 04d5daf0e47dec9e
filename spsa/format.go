package spsa

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Parameter lists as people paste them. Both tuning sites' inputs are
// accepted, one parameter a line (a line break or a semicolon ends a line;
// blank lines and lines starting with '#' are skipped), fields separated by
// commas with blanks around them ignored:
//
//	Fishtest   (6 fields):  name, start, min, max, c_end, r_end
//	OpenBench  (7 fields):  name, int|float, start, min, max, c_end, r_end
//
// Fishtest's parameters are integers (its worker rounds every value), which
// is also what Stockfish's TUNE macro prints.

// MaxParamsText bounds a parameter list's text.
const MaxParamsText = 1 << 20

// ParseParams reads a parameter list in Fishtest's or OpenBench's format
// (any mix of the two) and checks it (CheckParams). Errors name the line,
// the parameter and the field.
func ParseParams(text string) ([]Param, error) {
	if len(text) > MaxParamsText {
		return nil, fmt.Errorf("params: %d bytes, at most %d", len(text), MaxParamsText)
	}
	var out []Param
	lineNo := 0
	for _, block := range strings.Split(text, "\n") {
		for _, line := range strings.Split(block, ";") {
			lineNo++
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if len(out) == MaxParams {
				return nil, fmt.Errorf("params: more than %d", MaxParams)
			}
			p, err := parseLine(line)
			if err != nil {
				return nil, fmt.Errorf("params line %d: %w", lineNo, err)
			}
			out = append(out, p)
		}
	}
	if err := CheckParams(out); err != nil {
		return nil, err
	}
	return out, nil
}

func parseLine(line string) (Param, error) {
	f := strings.Split(line, ",")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	var p Param
	var nums []string
	switch len(f) {
	case 6:
		p.Name, nums = f[0], f[1:]
	case 7:
		p.Name, nums = f[0], f[2:]
		switch strings.ToLower(f[1]) {
		case "int":
		case "float":
			p.Float = true
		default:
			return p, fmt.Errorf("param %s: type %s: want int or float (OpenBench's format)", quote(p.Name), quote(f[1]))
		}
	default:
		return p, fmt.Errorf("%s has %d fields: want Fishtest's 6 (name, start, min, max, c_end, r_end) or OpenBench's 7 (name, int|float, start, min, max, c_end, r_end)",
			quote(line), len(f))
	}
	if err := checkName(p.Name); err != nil {
		return p, err
	}
	dst := []*float64{&p.Start, &p.Min, &p.Max, &p.CEnd, &p.REnd}
	for i, name := range []string{"start", "min", "max", "c_end", "r_end"} {
		v, err := strconv.ParseFloat(nums[i], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return p, fmt.Errorf("param %s: %s %s is not a number", quote(p.Name), name, quote(nums[i]))
		}
		*dst[i] = v
	}
	return p, p.check()
}

// Format is a way to print a tune's values.
type Format string

// The formats Export writes.
const (
	// Fishtest: name,value,min,max,c_end,r_end, ready to paste as a new
	// tune's parameters.
	Fishtest Format = "fishtest"
	// OpenBench: name, int|float, value, min, max, c_end, r_end.
	OpenBench Format = "openbench"
	// UCI: setoption name N value V, one a line.
	UCI Format = "uci"
	// Options: option.N=V,... for an engine spec (--engine).
	Options Format = "options"
	// Go: rows of our engine's parameter tables (engine/eval/weights.go,
	// engine/search/params.go) with the values as defaults.
	Go Format = "go"
)

// Formats lists every format.
var Formats = []Format{Fishtest, OpenBench, UCI, Options, Go}

// ParseFormat accepts a format name in any letter case.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if strings.EqualFold(strings.TrimSpace(s), string(f)) {
			return f, nil
		}
	}
	return "", fmt.Errorf("format %s: want fishtest, openbench, uci, options or go", quote(s))
}

// Export prints values (θ, one per parameter) in format f. Integer
// parameters are rounded to the nearest integer in their range; c_end and
// r_end are the tune's, so the lines start a follow-up tune where this one
// ended.
func Export(f Format, ps []Param, values []float64) (string, error) {
	if len(values) != len(ps) {
		return "", fmt.Errorf("export: %d values for %d parameters", len(values), len(ps))
	}
	vs := Rounded(ps, values)
	var b strings.Builder
	switch f {
	case Fishtest:
		for i, p := range ps {
			fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s\n", p.Name, num(vs[i]), num(p.Min), num(p.Max), num(p.CEnd), num(p.REnd))
		}
	case OpenBench:
		for i, p := range ps {
			typ := "int"
			if p.Float {
				typ = "float"
			}
			fmt.Fprintf(&b, "%s, %s, %s, %s, %s, %s, %s\n", p.Name, typ, num(vs[i]), num(p.Min), num(p.Max), num(p.CEnd), num(p.REnd))
		}
	case UCI:
		for i, p := range ps {
			fmt.Fprintf(&b, "setoption name %s value %s\n", p.Name, p.OptionValue(vs[i]))
		}
	case Options:
		for i, p := range ps {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "option.%s=%s", p.Name, p.OptionValue(vs[i]))
		}
		b.WriteByte('\n')
	case Go:
		// Our engine's Params rows: eval.Param{Name, Default, Min, Max,
		// Step}, the step being the tune's c_end.
		b.WriteString("// Tuned values: replace the rows of these names in engine/eval/weights.go or engine/search/params.go.\n")
		for i, p := range ps {
			if p.Float {
				return "", fmt.Errorf("export go: param %s is real-valued; the engine's parameters are integers", quote(p.Name))
			}
			fmt.Fprintf(&b, "{Name: %q, Default: %d, Min: %d, Max: %d, Step: %d},\n", p.Name, int64(vs[i]),
				int64(math.Ceil(p.Min)), int64(math.Floor(p.Max)), max(int64(math.Round(p.CEnd)), 1))
		}
	default:
		return "", fmt.Errorf("export: unknown format %s", quote(string(f)))
	}
	return b.String(), nil
}
