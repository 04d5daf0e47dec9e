// Package engineallow is a worker operator's list of the installed engines
// that clients may name (`arbiter worker --engine-allow`,
// `--engine-allow-file`). A test's `cmd=` engine runs unsandboxed as the
// worker's user, so the client only chooses which of the operator's
// engines plays: the program, its arguments and its working directory are
// the operator's, and options that make an engine read or write a file
// (a path in the value, or a name like "Debug Log File", "SyzygyPath",
// "EvalFile") pass only where the operator allowed them by name. The
// options that size an engine, Hash and Threads (see bounded), pass only
// up to the operator's bounds: a client cannot make an allowed engine take
// all of the worker's memory or cores.
//
// Grammar of one entry (the engine spec's quoting and escapes):
//
//	/usr/games/stockfish                      name "stockfish", that program
//	name=sf,cmd=/usr/games/stockfish          name "sf"
//	name=ph,cmd=/usr/games/phalanx,args=-b- -l-
//	name=sf,cmd=stockfish,options=SyzygyPath;EvalFile   (looked up in PATH at start)
//	name=sf,cmd=/usr/games/stockfish,maxhash=4096,maxthreads=8   (its own bounds)
//
// A file holds one entry per line; blank lines and lines starting with #
// are skipped.
package engineallow

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

// Engine is one engine the operator allows.
type Engine struct {
	// Name is what a client names it by (cmd=NAME).
	Name string
	// Cmd is the program (absolute once Resolve found it in PATH).
	Cmd string
	// Args and Dir are the operator's, never the client's.
	Args []string
	Dir  string
	// FileOptions are the options that name files which clients may set
	// (compared without case and blanks).
	FileOptions []string
	// Bounds caps what clients may set the engine's Hash and Threads to;
	// a zero field takes the worker's bound (New).
	Bounds Bounds
}

// Bounds are the largest Hash (MB) and Threads clients may give an
// allowed engine; 0 is no bound.
type Bounds struct {
	MaxHashMB  int
	MaxThreads int
}

// bounded is the one list of the options a worker bounds: the UCI names
// (compared without case and blanks), the entry key and worker flag that
// set the bound, and the bound of an engine.
var bounded = []struct {
	option, unit, key, flag string
	max                     func(Bounds) int
}{
	{option: "Hash", unit: " MB", key: "maxhash", flag: "--engine-max-hash", max: func(b Bounds) int { return b.MaxHashMB }},
	{option: "Threads", key: "maxthreads", flag: "--engine-max-threads", max: func(b Bounds) int { return b.MaxThreads }},
}

// maxBound bounds a bound itself: more than any machine has, so that a
// typo is refused rather than read as "no bound".
const maxBound = 1 << 30

// parseBound reads the value of a maxhash= or maxthreads= entry key.
func parseBound(key, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > maxBound {
		return 0, fmt.Errorf("%s=%q: want a whole number in 1..%d", key, clip(v), maxBound)
	}
	return n, nil
}

// entryKeys are the keys of an entry, for errors.
const entryKeys = "name, cmd, args, arg, dir, options, maxhash, maxthreads"

// maxEntries bounds a list: an operator's file, not a data set.
const maxEntries = 1000

// ParseEntry reads one --engine-allow value.
func ParseEntry(s string) (Engine, error) {
	var e Engine
	items, err := enginespec.Items(s)
	if err != nil {
		return e, fmt.Errorf("--engine-allow %q: %v", s, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("--engine-allow %q: %s", s, fmt.Sprintf(format, args...))
	}
	for i, it := range items {
		if it.Bare {
			if i != 0 || it.Key == "" {
				return e, bad("item %q is not key=value (keys: %s)", it.Key, entryKeys)
			}
			it = enginespec.KeyValue{Key: "cmd", Value: it.Key}
		}
		if strings.ContainsAny(it.Value, "\x00\r\n") {
			return e, bad("%s= holds a control character", it.Key)
		}
		switch it.Key {
		case "name":
			e.Name = it.Value
		case "cmd":
			e.Cmd = it.Value
		case "args":
			e.Args = append(e.Args, strings.Fields(it.Value)...)
		case "arg":
			e.Args = append(e.Args, it.Value)
		case "dir":
			e.Dir = it.Value
		case "options":
			for _, o := range strings.Split(it.Value, ";") {
				if o = strings.TrimSpace(o); o != "" {
					e.FileOptions = append(e.FileOptions, o)
				}
			}
		case "maxhash", "maxthreads":
			n, err := parseBound(it.Key, it.Value)
			if err != nil {
				return e, bad("%v", err)
			}
			if it.Key == "maxhash" {
				e.Bounds.MaxHashMB = n
			} else {
				e.Bounds.MaxThreads = n
			}
		default:
			return e, bad("unknown key %q (keys: %s)", it.Key, entryKeys)
		}
	}
	if e.Cmd == "" {
		return e, bad("no program (cmd=PATH, or the path alone)")
	}
	if e.Name == "" {
		e.Name = filepath.Base(e.Cmd)
	}
	if strings.ContainsAny(e.Name, " \t,=\x00") || e.Name == "." || e.Name == string(filepath.Separator) {
		return e, bad("name %q: want a word without blanks, commas or '='", e.Name)
	}
	return e, nil
}

// ParseFile reads an --engine-allow-file.
func ParseFile(path string) ([]Engine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--engine-allow-file: %v", err)
	}
	defer f.Close()
	var out []Engine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(out) == maxEntries {
			return nil, fmt.Errorf("--engine-allow-file %s: more than %d engines", path, maxEntries)
		}
		e, err := ParseEntry(line)
		if err != nil {
			return nil, fmt.Errorf("--engine-allow-file %s line %d: %v", path, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--engine-allow-file %s: %v", path, err)
	}
	return out, nil
}

// List is a worker's allowed engines. The zero List allows none.
type List struct {
	engines []Engine
}

// New makes a list; a name given twice is refused. A program not found
// in PATH keeps its name (it may be installed later) and is reported in
// missing. An engine without bounds of its own takes worker's (a zero
// field of both is no bound).
func New(engines []Engine, worker Bounds) (l *List, missing []string, err error) {
	if len(engines) > maxEntries {
		return nil, nil, fmt.Errorf("--engine-allow: more than %d engines", maxEntries)
	}
	l = &List{}
	for _, e := range engines {
		if slices.ContainsFunc(l.engines, func(o Engine) bool {
			return o.Name == e.Name && slices.Equal(o.Args, e.Args) && o.Dir == e.Dir
		}) {
			return nil, nil, fmt.Errorf("--engine-allow: engine %q given twice", e.Name)
		}
		if e.Bounds.MaxHashMB == 0 {
			e.Bounds.MaxHashMB = worker.MaxHashMB
		}
		if e.Bounds.MaxThreads == 0 {
			e.Bounds.MaxThreads = worker.MaxThreads
		}
		if p, err := exec.LookPath(e.Cmd); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				e.Cmd = abs
			}
		} else {
			missing = append(missing, e.Cmd)
		}
		l.engines = append(l.engines, e)
	}
	return l, missing, nil
}

// Names are the allowed engines' names, in the order given.
func (l *List) Names() []string {
	if l == nil {
		return nil
	}
	out := make([]string, len(l.engines))
	for i, e := range l.engines {
		out[i] = e.Name
	}
	return out
}

// Len is the number of allowed engines.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.engines)
}

// ErrNotAllowed is wrapped by every refusal of Resolve and CheckOptions.
var ErrNotAllowed = errors.New("not allowed on this worker")

// Resolve finds the engine a client named: cmd is an allowed engine's
// name, or exactly the program an entry allows. The client's args and dir
// must be empty or the operator's own; a name given with several argument
// lists (`arbiter up` allows each engine of its command line) is chosen by
// them.
func (l *List) Resolve(cmd string, args []string, dir string) (Engine, error) {
	var cands []Engine
	if l != nil {
		for _, e := range l.engines {
			if e.Name == cmd {
				cands = append(cands, e)
			}
		}
		if len(cands) == 0 && strings.ContainsAny(cmd, `/\`) {
			for _, e := range l.engines {
				if filepath.Clean(cmd) == e.Cmd {
					cands = append(cands, e)
				}
			}
		}
	}
	if len(cands) == 0 {
		return Engine{}, fmt.Errorf("engine command %q is %w (its operator allows %s)", clip(cmd), ErrNotAllowed, l.describe())
	}
	for _, e := range cands {
		if (len(args) == 0 || slices.Equal(args, e.Args)) && (dir == "" || dir == e.Dir) {
			return e, nil
		}
	}
	e := cands[0]
	if len(args) > 0 && !slices.Equal(args, e.Args) {
		return Engine{}, fmt.Errorf("engine %q: arguments %q are %w: the worker's operator sets them (%q)", e.Name, clipList(args), ErrNotAllowed, e.Args)
	}
	return Engine{}, fmt.Errorf("engine %q: working directory %q is %w: the worker's operator sets it", e.Name, clip(dir), ErrNotAllowed)
}

func (l *List) describe() string {
	names := l.Names()
	switch {
	case len(names) == 0:
		return "no installed engines; give it --engine-allow"
	case len(names) > 10:
		names = append(names[:10], "…")
	}
	return strings.Join(names, ", ")
}

// CheckOptions refuses the options of e that name a file (NamesFile)
// unless its operator allowed them, and a Hash or Threads above e's bounds.
func (e Engine) CheckOptions(options map[string]string) error {
	names := make([]string, 0, len(options))
	for k := range options {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if err := e.checkBound(k, options[k]); err != nil {
			return err
		}
		if !NamesFile(k, options[k]) {
			continue
		}
		if slices.ContainsFunc(e.FileOptions, func(a string) bool { return fold(a) == fold(k) }) {
			continue
		}
		return fmt.Errorf("engine %q: option %q=%q names a file, which is %w unless its operator lists it (--engine-allow name=%s,cmd=...,options=%s)",
			e.Name, clip(k), clip(options[k]), ErrNotAllowed, e.Name, k)
	}
	return nil
}

// checkBound refuses option name=value when it is one of bounded and
// value is not a positive whole number within e's bound.
func (e Engine) checkBound(name, value string) error {
	for _, b := range bounded {
		limit := b.max(e.Bounds)
		if fold(name) != fold(b.option) || limit == 0 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil || n < 1 {
			return fmt.Errorf("engine %q: option %s=%q is %w: this worker bounds %s and takes a whole number in 1..%d%s",
				e.Name, b.option, clip(value), ErrNotAllowed, b.option, limit, b.unit)
		}
		if n > limit {
			return fmt.Errorf("engine %q: option %s=%d%s is %w: above its operator's bound of %d%s (%s, or %s= in --engine-allow)",
				e.Name, b.option, n, b.unit, ErrNotAllowed, limit, b.unit, b.flag, b.key)
		}
	}
	return nil
}

// NamesFile is the rule for options that make an engine open a file: a
// name that says so (file, path, dir, log: "Debug Log File", "SyzygyPath",
// "EvalFile", "BookFile", "NNUE dir") or a value that holds a path
// separator. "OwnBook=false" or "Threads=4" are not; "UCI_Opponent=.. a/b"
// is (refused unless allowed), the price of a simple rule.
func NamesFile(name, value string) bool {
	n := fold(name)
	for _, w := range []string{"file", "path", "dir", "log"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return strings.ContainsAny(value, `/\`)
}

func fold(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), ""))
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

func clipList(args []string) string {
	return clip(strings.Join(args, " "))
}
