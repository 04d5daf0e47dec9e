package spsa

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Source is where a tune's parameters come from, as --params gives it:
//
//	from-engine              every tunable spin option of the engine
//	from-engine:NAME,NAME    those spin options
//	FILE                     a file in Fishtest's or OpenBench's format
//	"A,int,20,5,200,3,0.002;B,..."   the same, inline
type Source struct {
	// FromEngine: the parameters are the engine's own options (Names, or
	// every tunable one).
	FromEngine bool
	Names      []string
	// Text is the parameter list (a file's contents or the argument).
	Text string
	// File is the file Text was read from ("" for an inline list).
	File string
}

// FromEnginePrefix introduces the engine's own options in --params.
const FromEnginePrefix = "from-engine"

// ParseSource reads a --params value. A value naming a file that exists is
// read with readFile; a value with a comma that names no file is an inline
// list. The error names the flag's value.
func ParseSource(arg string, readFile func(name string) ([]byte, error)) (Source, error) {
	a := strings.TrimSpace(arg)
	if a == "" {
		return Source{}, errors.New("params: empty (give a file, a list, or from-engine)")
	}
	if rest, ok := strings.CutPrefix(a, FromEnginePrefix); ok && (rest == "" || rest[0] == ':') {
		s := Source{FromEngine: true}
		if rest != "" {
			for _, n := range strings.Split(rest[1:], ",") {
				if n = strings.TrimSpace(n); n != "" {
					s.Names = append(s.Names, n)
				}
			}
			if len(s.Names) == 0 {
				return Source{}, fmt.Errorf("params %s: no option named after the colon", quote(a))
			}
		}
		return s, nil
	}
	b, err := readFile(a)
	switch {
	case err == nil:
		if len(b) > MaxParamsText {
			return Source{}, fmt.Errorf("params file %s: %d bytes, at most %d", quote(a), len(b), MaxParamsText)
		}
		return Source{Text: string(b), File: a}, nil
	case errors.Is(err, fs.ErrNotExist) && strings.Contains(a, ","):
		return Source{Text: a}, nil
	case errors.Is(err, fs.ErrNotExist):
		return Source{}, fmt.Errorf("params %s: no such file, and not a parameter list (name,start,min,max,c_end,r_end)", quote(a))
	}
	return Source{}, fmt.Errorf("params file %s: %w", quote(a), err)
}

// Params resolves the source: a list is parsed (ParseParams); the engine's
// options are read with decls (BuiltinOptions, or ReadUCIOptions of the
// engine) and turned into parameters (FromEngine). A list is checked
// against the engine too when decls is not nil (CheckAgainst).
func (s Source) Params(decls func() ([]OptionDecl, error)) ([]Param, error) {
	if s.FromEngine {
		if decls == nil {
			return nil, errors.New("params from-engine: this engine's options cannot be read here")
		}
		ds, err := decls()
		if err != nil {
			return nil, fmt.Errorf("params from-engine: %w", err)
		}
		return FromEngine(ds, s.Names)
	}
	ps, err := ParseParams(s.Text)
	if err != nil {
		if s.File != "" {
			return nil, fmt.Errorf("%s: %w", s.File, err)
		}
		return nil, err
	}
	if decls != nil {
		ds, err := decls()
		if err != nil {
			return nil, fmt.Errorf("params: the engine's options: %w", err)
		}
		if err := CheckAgainst(ps, ds); err != nil {
			return nil, err
		}
	}
	return ps, nil
}
