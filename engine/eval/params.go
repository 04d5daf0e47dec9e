package eval

import (
	"fmt"
	"strconv"
	"strings"
)

// Param is one tunable integer of the engine: an evaluation weight or a
// search constant. Each becomes a UCI `spin` option (Name, Default, Min,
// Max), so an SPRT can compare two settings and a tuner (SPSA) can move it by
// Step. Min and Max bound what a user may set; they are chosen wide enough
// for tuning but narrow enough that no value breaks the search (e.g. a
// negative piece value or a null-move reduction that skips the whole tree).
type Param struct {
	Name    string
	Default int
	Min     int
	Max     int
	Step    int
}

// Validate checks v against p's range, naming the option in the error.
func (p *Param) Validate(v int) error {
	if v < p.Min || v > p.Max {
		return fmt.Errorf("option %q: value %d out of range [%d, %d]", p.Name, v, p.Min, p.Max)
	}
	return nil
}

// ParseValue reads a decimal option value and checks its range.
func (p *Param) ParseValue(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("option %q: value %q is not an integer", p.Name, s)
	}
	return v, p.Validate(v)
}

// FindParam returns the index of the parameter named name in table
// (case-insensitive, as UCI option names are), or -1.
func FindParam(table []Param, name string) int {
	for i := range table {
		if strings.EqualFold(table[i].Name, name) {
			return i
		}
	}
	return -1
}
