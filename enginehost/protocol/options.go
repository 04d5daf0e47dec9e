package protocol

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// OptionType is the type an engine declares an option with.
type OptionType string

// The option types of UCI; xboard's map onto them (xboardTypes).
const (
	Spin   OptionType = "spin"
	Check  OptionType = "check"
	Combo  OptionType = "combo"
	String OptionType = "string"
	Button OptionType = "button"
)

// uciTypes is the one table of UCI's type words.
var uciTypes = map[string]OptionType{"spin": Spin, "check": Check, "combo": Combo, "string": String, "button": Button}

// Caps on what one engine declares (the engine's text is not a size).
const (
	// maxOptions is the most options of one engine kept; Stockfish
	// declares about 20, a tuning build a few hundred.
	maxOptions = 4096
	// maxVars is the most values of one combo.
	maxVars = 256
)

// Option is an option as an engine declared it.
type Option struct {
	Name string
	Type OptionType
	// Default, MinText and MaxText are as written ("" when not given).
	Default, MinText, MaxText string
	// Min and Max bound a spin when HasRange (an engine may give neither).
	Min, Max int64
	HasRange bool
	// Real: a spin declared with a decimal default, min or max (fastchess
	// takes them as doubles); its bounds are MinReal and MaxReal, and Min
	// and Max are unset.
	Real             bool
	MinReal, MaxReal float64
	// Vars are a combo's values.
	Vars []string
	// xboard: declared as an xboard feature (a check takes 0 or 1).
	xboard bool
}

// uciKeywords split an option line; a name may contain them up to "type".
var uciKeywords = map[string]bool{"name": true, "type": true, "default": true, "min": true, "max": true, "var": true}

// ParseOption reads a UCI option line, "option name N type T [default D]
// [min A] [max B] [var V]...". Names and values may hold blanks, so the
// keywords split the line; a string's default is the rest of the line.
// The error quotes the line and says what is wrong with it.
func ParseOption(line string) (Option, error) {
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "option" {
		return Option{}, lineError(line, "not an option line")
	}
	var o Option
	var typeWord string
	key, val := "", []string(nil)
	flush := func() error {
		v := strings.Join(val, " ")
		val = val[:0]
		switch key {
		case "name":
			o.Name = v
		case "type":
			typeWord = v
		case "default":
			o.Default = v
		case "min":
			o.MinText = v
		case "max":
			o.MaxText = v
		case "var":
			if len(o.Vars) == maxVars {
				return fmt.Errorf("more than %d vars", maxVars)
			}
			o.Vars = append(o.Vars, v)
		}
		return nil
	}
	for _, w := range f[1:] {
		if uciKeywords[w] && (key != "name" || w == "type") && !(key == "default" && typeWord == "string") {
			if err := flush(); err != nil {
				return Option{}, lineError(line, err.Error())
			}
			key = w
			continue
		}
		val = append(val, w)
	}
	if err := flush(); err != nil {
		return Option{}, lineError(line, err.Error())
	}
	if o.Name == "" {
		return Option{}, lineError(line, "no name")
	}
	t, ok := uciTypes[typeWord]
	if !ok {
		if typeWord == "" {
			return Option{}, lineError(line, "no type")
		}
		return Option{}, lineError(line, fmt.Sprintf("unknown type %q (want spin, check, combo, string or button)", typeWord))
	}
	o.Type = t
	if err := o.validate(); err != nil {
		return Option{}, lineError(line, err.Error())
	}
	return o, nil
}

func lineError(line, why string) error {
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	return fmt.Errorf("option line %q: %s", line, why)
}

// validate checks a parsed declaration by its type and reads a spin's
// bounds.
func (o *Option) validate() error {
	switch o.Type {
	case Spin:
		return o.validateSpin()
	case Check:
		if d := o.Default; d != "" && o.boolean(d) == "" {
			return fmt.Errorf("check default %q is neither true nor false", d)
		}
	case Combo:
		if len(o.Vars) == 0 {
			return errors.New("a combo with no var")
		}
	}
	return nil
}

// validateSpin reads a spin's bounds: integers, or (Real) decimals when
// any of its numbers is one; min and max both or neither.
func (o *Option) validateSpin() error {
	if (o.MinText == "") != (o.MaxText == "") {
		return errors.New("a spin with a min and no max, or a max and no min")
	}
	nums := []struct{ what, text string }{{"default", o.Default}, {"min", o.MinText}, {"max", o.MaxText}}
	for _, n := range nums {
		if n.text == "" {
			continue
		}
		if _, err := strconv.ParseInt(n.text, 10, 64); err == nil {
			continue
		}
		if f, err := strconv.ParseFloat(n.text, 64); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("spin %s %q is not a number", n.what, n.text)
		}
		o.Real = true
	}
	if o.MinText == "" {
		return nil // no range declared: any number
	}
	o.HasRange = true
	if o.Real {
		o.MinReal, _ = strconv.ParseFloat(o.MinText, 64)
		o.MaxReal, _ = strconv.ParseFloat(o.MaxText, 64)
		if o.MinReal > o.MaxReal {
			return fmt.Errorf("spin min %s is above its max %s", o.MinText, o.MaxText)
		}
		return nil
	}
	o.Min, _ = strconv.ParseInt(o.MinText, 10, 64)
	o.Max, _ = strconv.ParseInt(o.MaxText, 10, 64)
	if o.Min > o.Max {
		return fmt.Errorf("spin min %d is above its max %d", o.Min, o.Max)
	}
	return nil
}

// boolean is a check's value in canonical form ("" when v is not one).
func (o *Option) boolean(v string) string {
	switch strings.ToLower(v) {
	case "true":
		return "true"
	case "false":
		return "false"
	case "1", "0":
		if o.xboard {
			return v
		}
	}
	return ""
}

// Check says whether value can be given to the option: an integer in
// range for a spin, true or false for a check (xboard: 0 or 1), one of
// the vars of a combo (any letter case). The error names the option and
// the value.
func (o Option) Check(value string) error {
	switch o.Type {
	case Spin:
		if o.Real {
			return o.checkReal(value)
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("option %q=%q: want an integer", o.Name, value)
		}
		if o.HasRange && (n < o.Min || n > o.Max) {
			return fmt.Errorf("option %q=%d: out of range %d..%d", o.Name, n, o.Min, o.Max)
		}
	case Check:
		if o.boolean(value) == "" {
			if o.xboard {
				return fmt.Errorf("option %q=%q: want 0 or 1", o.Name, value)
			}
			return fmt.Errorf("option %q=%q: want true or false", o.Name, value)
		}
	case Combo:
		for _, v := range o.Vars {
			if strings.EqualFold(v, value) {
				return nil
			}
		}
		return fmt.Errorf("option %q=%q: want one of %s", o.Name, value, strings.Join(o.Vars, ", "))
	}
	return nil
}

// checkReal checks a value of a Real spin.
func (o Option) checkReal(value string) error {
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("option %q=%q: want a number", o.Name, value)
	}
	if o.HasRange && (f < o.MinReal || f > o.MaxReal) {
		return fmt.Errorf("option %q=%s: out of range %s..%s", o.Name, value, o.MinText, o.MaxText)
	}
	return nil
}

// Options are the options one engine declared, in its order, found by
// name in any letter case (UCI names are case-insensitive).
type Options struct {
	list  []Option
	index map[string]int // lower-case name → list index
	// Malformed holds an error per declaration that did not parse; the
	// option's name, when one could be read, is in broken.
	Malformed []error
	broken    map[string]error
	dropped   int // declarations past maxOptions
}

// AddLine parses one UCI option line into the set (Malformed when it
// does not parse).
func (s *Options) AddLine(line string) {
	o, err := ParseOption(line)
	if err != nil {
		s.addBroken(nameOf(line, "type"), err)
		return
	}
	s.add(o)
}

func (s *Options) add(o Option) {
	key := strings.ToLower(o.Name)
	if _, ok := s.index[key]; ok {
		return // declared twice: the first declaration holds, as in fastchess
	}
	if len(s.list)+len(s.Malformed) >= maxOptions {
		s.dropped++
		return
	}
	if s.index == nil {
		s.index = map[string]int{}
	}
	s.index[key] = len(s.list)
	s.list = append(s.list, o)
}

func (s *Options) addBroken(name string, err error) {
	if len(s.list)+len(s.Malformed) >= maxOptions {
		s.dropped++
		return
	}
	s.Malformed = append(s.Malformed, err)
	if name != "" {
		if s.broken == nil {
			s.broken = map[string]error{}
		}
		s.broken[strings.ToLower(name)] = err
	}
}

// nameOf is the name in an option line, up to the word end, for the
// record of a malformed declaration ("" when none can be read).
func nameOf(line, end string) string {
	f := strings.Fields(line)
	for i, w := range f {
		if w != "name" {
			continue
		}
		var name []string
		for _, n := range f[i+1:] {
			if n == end {
				break
			}
			name = append(name, n)
		}
		return strings.Join(name, " ")
	}
	return ""
}

// List is every well-formed option in the engine's order (the slice is
// the set's: do not change it).
func (s *Options) List() []Option { return s.list }

// Len is the number of well-formed options.
func (s *Options) Len() int { return len(s.list) }

// Lookup finds an option by name in any letter case.
func (s *Options) Lookup(name string) (Option, bool) {
	i, ok := s.index[strings.ToLower(name)]
	if !ok {
		return Option{}, false
	}
	return s.list[i], true
}

// Check says whether the engine takes value for the option named name:
// the option is declared (well-formed) and the value fits its type.
func (s *Options) Check(name, value string) error {
	o, ok := s.Lookup(name)
	if ok {
		return o.Check(value)
	}
	if err, bad := s.broken[strings.ToLower(name)]; bad {
		return fmt.Errorf("option %q: the engine's declaration of it is malformed: %v", name, err)
	}
	names := make([]string, len(s.list))
	for i, o := range s.list {
		names[i] = o.Name
	}
	return fmt.Errorf("option %q: the engine has no such option (it has: %s)", name, strings.Join(names, ", "))
}

// Dropped is the number of declarations past the cap of one engine's
// options (maxOptions), which were not kept.
func (s *Options) Dropped() int { return s.dropped }

// IsOptionLine reports whether line is an engine's option declaration
// ("option name ..."), well-formed or not.
func IsOptionLine(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), "option name ")
}
