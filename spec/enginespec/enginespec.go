// Package enginespec is the one grammar of an engine on the command line
// (`--engine` of match, submit, up and verify; `--each`; a worker's
// `--verify-engine`) and the one type it parses into, which converts to the
// match library's engine, to verify's engine and to the wire's EngineSpec.
//
// Grammar: comma-separated items.
//
//	name=NAME            the engine's name (reports, PGN, a worker's engine name)
//	cmd=PATH             the program; a first item without '=' is the program too
//	args=A B C           arguments, split at blanks; repeat to add more
//	arg=A B              one argument, taken whole (blanks and all)
//	dir=DIR              working directory
//	proto=P              uci (default), xboard, perftree, or builtin
//	builtin              the embedded engine (same as proto=builtin)
//	option.NAME=VALUE    an engine option, set in order (a later one replaces)
//	tc=.. st=.. nodes=.. depth=.. movetime=..   per-engine limits (matches only):
//	                     tc=[MOVES/]SEC[+INC] or tc=inf, st=SEC per move (fractions
//	                     allowed), movetime=MS, as fastchess and cutechess-cli read them
//	perft-gate=1         the movegen gate before the engine's first game (matches
//	                     only): verify's fixed suite through the engine's `go perft`
//	                     (perft-gate=uci is the same); a UCI program, not builtin
//
// Cluster tests (submit, up) also take an engine that travels to the
// workers, uploaded to the coordinator first, instead of cmd= or builtin:
//
//	upload=PATH          a program here, uploaded and run by the workers
//	source=DIR           a source tree here, uploaded and built by each worker
//	source=git:REPO@REF  that commit of a local git repository (git archive)
//	artifact=SHA         an artifact stored already (a prefix of 8+ hex digits)
//	build=CMD            the build command of a source tree ("make -j EXE=engine")
//	exe=PATH             the program the build makes, in the tree ("engine")
//	bench=N              the engine's bench node count, checked by each worker
//
// and a net the engine loads, with builtin or an engine that travels:
//
//	net=SHA              a net stored on the coordinator (arbiter net upload; a
//	                     prefix of 8+ hex digits), net=default for the default
//	                     net of the engine's name, or net=FILE: a net file here,
//	                     uploaded first
//	net-option=NAME      the engine option that takes the net's path (EvalFile)
//
// A value that contains a comma is quoted, `args="-bug a,b"` (inside quotes
// everything is literal but the quote, which is doubled: `""`), or the comma
// is escaped, `args=-bug\,a` (outside quotes a backslash escapes only a
// comma or a double quote, so Windows paths need no doubling). For the forms
// that predate quoting, an item without '=' after args=, arg= or
// option.NAME= continues that value: `args=-bug a,b` still passes "-bug a,b".
package enginespec

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/textcheck"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/verify"
)

// Proto is how Arbiter talks to an engine.
type Proto string

const (
	UCI      Proto = "uci"
	Xboard   Proto = "xboard"
	Perftree Proto = "perftree"
	Builtin  Proto = "builtin" // the embedded engine, in-process
)

// Setting is one key=value: an engine option or a limit.
type Setting struct{ Key, Value string }

// Spec is an engine as the user gave it.
type Spec struct {
	Name    string
	Cmd     string
	Args    []string
	Dir     string
	Proto   Proto     // "" when not given: the use's default applies
	Options []Setting // option.NAME=VALUE in order, one per name (any case)
	Limits  []Setting // tc=, nodes=, depth=, movetime= in order (matches)

	// An engine that travels to the workers (one of these three).
	Upload   string // upload=PATH
	Source   string // source=DIR or source=git:REPO@REF
	Artifact string // artifact=SHA
	Build    string // build=CMD (source trees)
	Exe      string // exe=PATH (source trees)
	Bench    uint64 // bench=N (0: not checked)

	// A net the engine loads (cluster tests): a stored one by hash (or
	// "default"), or a file here, uploaded first.
	Net       string // net=SHA or net=default
	NetFile   string // net=FILE
	NetOption string // net-option=NAME ("": EvalFile)

	// MovegenGate is perft-gate=: "" (none) or verify.GateProtoUCI.
	MovegenGate string

	// SyzygyPieces is syzygy=N (builtin): the engine probes the playing
	// machine's Syzygy tables in search up to N pieces (0: none).
	SyzygyPieces int
}

// HasNet reports whether the engine names a net.
func (s Spec) HasNet() bool { return s.Net != "" || s.NetFile != "" }

// Travels reports whether the engine is uploaded to the coordinator (or
// stored there) rather than installed on the workers.
func (s Spec) Travels() bool { return s.Upload != "" || s.Source != "" || s.Artifact != "" }

// MaxSyzygyPieces is the most pieces Syzygy tables have (7).
const MaxSyzygyPieces = 7

// Use is where a spec is given: it decides which keys and protocols are
// accepted and what is required.
type Use int

const (
	// Match: an engine of `submit sprt|match`, `up`: name= required (the
	// workers run the engine, so it cannot name itself here), cmd= or
	// builtin, protocols uci, xboard, builtin, limits.
	Match Use = iota + 1
	// Each: `--each`, settings for both engines of a match: options,
	// proto= (uci, xboard) and limits only.
	Each
	// Verify: an engine under test of `arbiter verify` or a worker's
	// `--verify-engine`: protocols uci and perftree, no limits. The caller
	// decides whether name= or cmd= is required (a cluster client names
	// the engine, a worker runs a program).
	Verify
	// LocalMatch: an engine of a local match or tournament (`arbiter
	// match`): as Match, but name= may be left out; the runner then names
	// the engine after its own `id name` (xboard `myname`), made unique.
	LocalMatch
)

func (u Use) protos() []Proto {
	switch u {
	case Match, LocalMatch:
		return []Proto{UCI, Xboard, Builtin}
	case Each:
		return []Proto{UCI, Xboard}
	}
	return []Proto{UCI, Perftree}
}

func (u Use) keys() []string {
	switch u {
	case Match:
		return []string{"name", "cmd", "args", "arg", "dir", "proto", "builtin", "option.NAME", "tc", "st", "nodes", "depth", "movetime", "perft-gate", "syzygy",
			"upload", "source", "artifact", "build", "exe", "bench", "net", "net-option"}
	case LocalMatch:
		return []string{"name", "cmd", "args", "arg", "dir", "proto", "builtin", "option.NAME", "tc", "st", "nodes", "depth", "movetime", "perft-gate", "syzygy"}
	case Each:
		return []string{"proto", "option.NAME", "tc", "st", "nodes", "depth", "movetime"}
	}
	return []string{"name", "cmd", "args", "arg", "dir", "proto", "option.NAME"}
}

// maxQuote bounds how much of a bad input an error repeats.
const maxQuote = 100

// clip quotes s for an error message: at most maxQuote bytes of its
// escaped form, so that three clips bound any error of this package.
func clip(s string) string {
	return apierr.Quote(s, maxQuote)
}

// clipKey is a key as an error names it: as given when it is short,
// printable UTF-8 (every known key, and most option names), else quoted
// and cut like a value (an option name is the submitter's text).
func clipKey(k string) string {
	if len(k) <= maxQuote && utf8.ValidString(k) && strings.IndexFunc(k, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return k
	}
	return clip(k)
}

// item is one key=value of a spec after unquoting; bare is set for an item
// without '=' (key holds the word).
type item struct {
	key, value string
	bare       bool
	raw        string
}

// split cuts s into items at commas outside quotes and not escaped.
func split(s string) ([]item, error) {
	var (
		items  []item
		cur    strings.Builder
		key    string
		hasKey bool
		quoted bool
		start  int
	)
	flush := func(end int) {
		it := item{raw: s[start:end]}
		if hasKey {
			it.key, it.value = strings.TrimSpace(key), cur.String()
		} else {
			it.key, it.bare = strings.TrimSpace(cur.String()), true
		}
		// Blanks around a value are the separator's, unless quoted (the
		// quotes were consumed; a value made of blanks stays as given).
		if hasKey && !strings.Contains(it.raw, `"`) {
			it.value = strings.TrimSpace(it.value)
		}
		items = append(items, it)
		cur.Reset()
		key, hasKey = "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '"' && i+1 < len(s) && s[i+1] == '"':
			i++
			cur.WriteByte('"')
		case !quoted && c == '\\' && i+1 < len(s) && (s[i+1] == ',' || s[i+1] == '"'):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			flush(i)
			start = i + 1
		case c == '=' && !quoted && !hasKey:
			key, hasKey = cur.String(), true
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if quoted {
		return nil, fmt.Errorf("engine spec %s: a quote (\") is not closed", clip(s))
	}
	flush(len(s))
	return items, nil
}

// Parse reads an engine spec for use. Errors name the item and what is
// wrong with it.
func Parse(s string, use Use) (Spec, error) {
	var spec Spec
	if strings.TrimSpace(s) == "" {
		return spec, fmt.Errorf("engine spec is empty: want %s", Usage(use))
	}
	items, err := split(s)
	if err != nil {
		return spec, err
	}
	seen := map[string]bool{}
	last := "" // the key a bare word continues (args, arg, option.NAME)
	var lim match.Limits
	for i, it := range items {
		if it.bare {
			switch {
			case it.key == "" && len(items) == 1:
				return spec, fmt.Errorf("engine spec is empty: want %s", Usage(use))
			case it.key == "":
				return spec, fmt.Errorf("engine spec %s: empty item between commas", clip(s))
			case it.key == "builtin":
				it = item{key: "builtin", value: "true", raw: it.raw}
			case i == 0 && use != Each:
				it = item{key: "cmd", value: it.key, raw: it.raw}
			case last != "":
				// The older form of a comma inside a value: "args=-bug a,b".
				if err := spec.continueValue(last, it.key); err != nil {
					return spec, fmt.Errorf("engine spec %s: %v", clip(s), err)
				}
				continue
			default:
				return spec, fmt.Errorf("engine spec %s: item %s is not key=value (a value with a comma is quoted: args=\"a,b\")", clip(s), clip(it.key))
			}
		}
		k, v := it.key, it.value
		last = ""
		bad := func(format string, args ...any) error {
			return fmt.Errorf("engine spec %s: %s=%s: %s", clip(s), clipKey(k), clip(v), fmt.Sprintf(format, args...))
		}
		once := func() error {
			if seen[k] {
				return fmt.Errorf("engine spec %s: %s= given twice", clip(s), k)
			}
			seen[k] = true
			return nil
		}
		program := k == "name" || k == "cmd" || k == "args" || k == "arg" || k == "dir" || k == "builtin"
		if program && use == Each {
			return spec, fmt.Errorf("engine spec %s: %s= belongs to one engine (--engine), not to both", clip(s), k)
		}
		if name, ok := strings.CutPrefix(k, "option."); ok {
			if strings.TrimSpace(name) == "" {
				return spec, bad("option. without a name")
			}
			if err := textcheck.Check("the option's name or value", name+v); err != nil {
				return spec, bad("%v", err)
			}
			spec.SetOption(name, v)
			last = k
			continue
		}
		if isLimit(k) {
			if use == Verify {
				return spec, fmt.Errorf("engine spec %s: %s= is a match time control; verify takes --depth and --timeout", clip(s), k)
			}
			if _, err := lim.ParseLimit(k, v); err != nil {
				return spec, fmt.Errorf("engine spec %s: %v", clip(s), err)
			}
			spec.Limits = append(spec.Limits, Setting{k, v})
			continue
		}
		continues, err := spec.setKey(s, use, k, v, once, bad)
		if err != nil {
			return spec, err
		}
		if continues {
			last = k
		}
	}
	return spec, spec.check(s, use)
}

// setKey applies one key=value item of an engine spec s other than
// option.NAME and the limits. continues says whether a bare word after it
// continues its value (args, arg).
func (spec *Spec) setKey(s string, use Use, k, v string, once func() error, bad func(format string, args ...any) error) (continues bool, err error) {
	switch k {
	case "name":
		if err := once(); err != nil {
			return false, err
		}
		if strings.TrimSpace(v) == "" {
			return false, bad("empty name")
		}
		spec.Name = v
	case "cmd":
		if err := once(); err != nil {
			return false, err
		}
		if v == "" {
			return false, bad("empty command")
		}
		spec.Cmd = v
	case "args":
		spec.Args = append(spec.Args, strings.Fields(v)...)
		continues = true
	case "arg":
		spec.Args = append(spec.Args, v)
		continues = true
	case "dir":
		if err := once(); err != nil {
			return false, err
		}
		spec.Dir = v
	case "net", "net-option":
		if use != Match {
			return false, fmt.Errorf("engine spec %s: %s= is for an engine of a cluster test (submit, up); a local match takes option.EvalFile=FILE", clip(s), k)
		}
		if err := once(); err != nil {
			return false, err
		}
		if err := spec.setNet(k, v); err != nil {
			return false, bad("%v", err)
		}
	case "perft-gate":
		if use != Match && use != LocalMatch {
			return false, fmt.Errorf("engine spec %s: perft-gate= is for an engine of a match or test (--engine of match, submit, up)", clip(s))
		}
		if err := once(); err != nil {
			return false, err
		}
		if err := spec.setGate(v); err != nil {
			return false, bad("%v", err)
		}
	case "syzygy":
		if use != Match && use != LocalMatch {
			return false, fmt.Errorf("engine spec %s: syzygy= is for the builtin engine of a match or test (--engine of match, submit, up)", clip(s))
		}
		if err := once(); err != nil {
			return false, err
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 3 || n > MaxSyzygyPieces {
			return false, bad("want the most pieces the engine probes, 3 to %d (the machine's tables: arbiter worker --syzygy DIR, a local match's --tb DIR)", MaxSyzygyPieces)
		}
		spec.SyzygyPieces = n
	case "upload", "source", "artifact", "build", "exe", "bench":
		if use != Match {
			return false, fmt.Errorf("engine spec %s: %s= is for an engine of a cluster test (submit, up)", clip(s), k)
		}
		if err := once(); err != nil {
			return false, err
		}
		if err := spec.setTravel(k, v); err != nil {
			return false, bad("%v", err)
		}
	case "proto", "builtin":
		p := Proto(v)
		if k == "builtin" {
			if v != "true" && v != "" {
				return false, bad("builtin takes no value")
			}
			p = Builtin
		}
		if p == "cecp" {
			p = Xboard
		}
		if !slices.Contains(use.protos(), p) {
			if k == "builtin" {
				return false, fmt.Errorf("engine spec %s: builtin: the embedded engine cannot be used here (want a program: cmd=PATH)", clip(s))
			}
			return false, bad("want %s", joinProtos(use.protos()))
		}
		if spec.Proto != "" && spec.Proto != p {
			return false, fmt.Errorf("engine spec %s: proto %s and %s exclude each other", clip(s), spec.Proto, p)
		}
		spec.Proto = p
	default:
		return false, fmt.Errorf("engine spec %s: unknown key %s (known: %s)", clip(s), clip(k), strings.Join(use.keys(), ", "))
	}
	return continues, nil
}

// continueValue appends ",word" to the value of key (args, arg, option.NAME).
func (s *Spec) continueValue(key, word string) error {
	switch {
	case key == "args":
		// The comma was inside the last argument: "-bug a,b".
		if len(s.Args) == 0 {
			s.Args = append(s.Args, "")
		}
		f := strings.Fields(word)
		if len(f) == 0 {
			return fmt.Errorf("args: empty item after a comma")
		}
		s.Args[len(s.Args)-1] += "," + f[0]
		s.Args = append(s.Args, f[1:]...)
	case key == "arg":
		s.Args[len(s.Args)-1] += "," + word
	default:
		name := strings.TrimPrefix(key, "option.")
		i := s.option(name)
		s.Options[i].Value += "," + word
	}
	return nil
}

// check enforces what use requires of a whole spec.
func (s *Spec) check(raw string, use Use) error {
	switch use {
	case Match, LocalMatch:
		if s.Name == "" && use == Match {
			return fmt.Errorf("engine spec %s: missing name=", clip(raw))
		}
		label := s.Name
		if label == "" {
			label = raw
		}
		if s.NetOption != "" && !s.HasNet() {
			return fmt.Errorf("engine %s: net-option= goes with net=", clip(label))
		}
		if s.HasNet() {
			if !s.Travels() && s.Proto != Builtin {
				return fmt.Errorf("engine %s: net= goes with builtin or an uploaded engine (upload=, source=, artifact=)", clip(label))
			}
			opt := s.NetOption
			if opt == "" {
				opt = "EvalFile"
			}
			if s.option(opt) >= 0 {
				return fmt.Errorf("engine %s: option.%s and net= exclude each other: the worker sets %s to the net's path", clip(label), opt, opt)
			}
		}
		if err := s.checkGate(label); err != nil {
			return err
		}
		if s.SyzygyPieces > 0 {
			if s.Proto != Builtin {
				return fmt.Errorf("engine %s: syzygy= goes with builtin (another engine takes its own tablebase option where its operator allows it)", clip(label))
			}
			for _, o := range []string{"SyzygyPath", "SyzygyProbeLimit"} {
				if s.option(o) >= 0 {
					return fmt.Errorf("engine %s: option.%s and syzygy= exclude each other: syzygy=N sets %s from the machine's tables", clip(label), o, o)
				}
			}
		}
		if s.Travels() {
			return s.checkTravel()
		}
		if s.Build != "" || s.Exe != "" || s.Bench != 0 {
			return fmt.Errorf("engine %s: build=, exe= and bench= go with upload=, source= or artifact=", clip(label))
		}
		if s.Proto == Builtin && s.Cmd != "" {
			return fmt.Errorf("engine %s: builtin and cmd= exclude each other", clip(label))
		}
		if s.Proto != Builtin && s.Cmd == "" {
			return fmt.Errorf("engine %s: missing cmd= (or builtin)", clip(label))
		}
		if s.Proto == Builtin && (len(s.Args) > 0 || s.Dir != "") {
			return fmt.Errorf("engine %s: the builtin engine takes no args= or dir=", clip(label))
		}
	case Verify:
		if s.Cmd == "" && s.Name == "" {
			return fmt.Errorf("engine spec %s: no cmd=PATH (or, with --cluster, name=NAME)", clip(raw))
		}
		if s.Proto == Perftree && len(s.Options) > 0 {
			return fmt.Errorf("engine spec %s: option.* needs proto=uci (a perftree script has no options)", clip(raw))
		}
	}
	return nil
}

func isLimit(k string) bool {
	return k == "tc" || k == "nodes" || k == "depth" || k == "movetime" || k == "st"
}

func joinProtos(ps []Proto) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// Usage is the short form of the grammar for use, for help and errors.
func Usage(use Use) string {
	switch use {
	case Match:
		return `name=NAME,cmd=PATH[,args="A B"][,dir=D][,proto=uci|xboard][,option.X=V][,tc=..|st=..|nodes=..|depth=..|movetime=..][,perft-gate=1] or name=NAME,builtin[,option.X=V]` +
			` or (cluster tests) name=NAME,upload=PATH|source=DIR|source=git:REPO@REF|artifact=SHA[,build=CMD][,exe=PATH][,bench=N]` +
			`, with builtin or these [,net=SHA|default|FILE][,net-option=NAME]`
	case LocalMatch:
		return `[name=NAME,]cmd=PATH[,args="A B"][,dir=D][,proto=uci|xboard][,option.X=V][,tc=..|st=..|nodes=..|depth=..|movetime=..][,perft-gate=1] or [name=NAME,]builtin[,option.X=V]`
	case Each:
		return `tc=[MOVES/]SEC[+INC]|tc=inf|st=SEC|nodes=N|depth=D|movetime=MS[,option.X=V][,proto=uci|xboard]`
	}
	return `cmd=PATH[,args="A B"][,proto=uci|perftree][,option.X=V][,dir=D]`
}

func (s *Spec) option(name string) int {
	return slices.IndexFunc(s.Options, func(o Setting) bool { return strings.EqualFold(o.Key, name) })
}

// SetOption sets an option; one already set under that name (in any case)
// is replaced, and the option moves last: options are sent in order, and
// the last word is the user's.
func (s *Spec) SetOption(name, value string) {
	if i := s.option(name); i >= 0 {
		s.Options = slices.Delete(s.Options, i, i+1)
	}
	s.Options = append(s.Options, Setting{name, value})
}

// String renders the spec in the grammar, quoting values where needed, so
// that Parse(s.String()) gives s back.
func (s Spec) String() string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+quote(v)) }
	if s.Name != "" {
		add("name", s.Name)
	}
	if s.Proto == Builtin {
		parts = append(parts, "builtin")
	}
	if s.Cmd != "" {
		add("cmd", s.Cmd)
	}
	for _, a := range s.Args {
		if f := strings.Fields(a); len(f) == 1 && f[0] == a {
			add("args", a)
		} else {
			add("arg", a) // blanks, or empty: one argument whole
		}
	}
	if s.Dir != "" {
		add("dir", s.Dir)
	}
	for _, kv := range [][2]string{{"upload", s.Upload}, {"source", s.Source}, {"artifact", s.Artifact}, {"build", s.Build}, {"exe", s.Exe}} {
		if kv[1] != "" {
			add(kv[0], kv[1])
		}
	}
	if s.Bench != 0 {
		add("bench", strconv.FormatUint(s.Bench, 10))
	}
	for _, kv := range [][2]string{{"net", s.Net}, {"net", s.NetFile}, {"net-option", s.NetOption}} {
		if kv[1] != "" {
			add(kv[0], kv[1])
		}
	}
	if s.Proto != "" && s.Proto != Builtin {
		add("proto", string(s.Proto))
	}
	for _, o := range s.Options {
		add("option."+o.Key, o.Value)
	}
	for _, l := range s.Limits {
		add(l.Key, l.Value)
	}
	if s.MovegenGate != "" {
		add("perft-gate", s.MovegenGate)
	}
	if s.SyzygyPieces > 0 {
		add("syzygy", strconv.Itoa(s.SyzygyPieces))
	}
	return strings.Join(parts, ",")
}

// quote returns v as a value of the grammar.
func quote(v string) string {
	if v != "" && !strings.ContainsAny(v, `,"=\`) && strings.TrimSpace(v) == v {
		return v
	}
	return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
}

// setTravel reads one key of an engine that travels to the workers.
func (s *Spec) setTravel(k, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("empty value")
	}
	switch k {
	case "upload":
		s.Upload = v
	case "source":
		s.Source = v
	case "artifact":
		if len(v) < 8 || len(v) > 64 || strings.Trim(strings.ToLower(v), "0123456789abcdef") != "" {
			return fmt.Errorf("want the artifact's SHA-256, or a prefix of at least 8 hex digits")
		}
		s.Artifact = strings.ToLower(v)
	case "build":
		s.Build = v
	case "exe":
		s.Exe = v
	case "bench":
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("want the bench node count, a positive integer")
		}
		s.Bench = n
	}
	return nil
}

// setGate reads perft-gate=: on (1, true, uci) or off (0, false).
func (s *Spec) setGate(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on", verify.GateProtoUCI:
		s.MovegenGate = verify.GateProtoUCI
	case "0", "false", "no", "off":
		s.MovegenGate = ""
	default:
		return fmt.Errorf("want 1 (the engine answers go perft; uci is the same) or 0")
	}
	return nil
}

// checkGate refuses a movegen gate on an engine it cannot check: the
// embedded engine is Arbiter's own generator, and an xboard engine has no
// `go perft`.
func (s *Spec) checkGate(label string) error {
	switch {
	case s.MovegenGate == "":
		return nil
	case s.Proto == Builtin:
		return fmt.Errorf("engine %s: perft-gate= checks another engine's move generator; the builtin engine's is Arbiter's own", clip(label))
	case s.Proto == Xboard:
		return fmt.Errorf("engine %s: perft-gate= needs a UCI engine that answers go perft (proto=xboard has none)", clip(label))
	}
	return nil
}

// setNet reads net= (a hash, "default", or a file) and net-option=.
func (s *Spec) setNet(k, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("empty value")
	}
	if k == "net-option" {
		if strings.ContainsAny(v, " \t") {
			return fmt.Errorf("want an engine option's name (without blanks)")
		}
		s.NetOption = v
		return nil
	}
	switch {
	case v == "default":
		s.Net = v
	case isHashRef(v) && !fileExists(v):
		s.Net = strings.ToLower(v)
	default:
		s.NetFile = v
	}
	return nil
}

// isHashRef reports whether v can be a stored artifact's hash or prefix.
func isHashRef(v string) bool {
	return len(v) >= 8 && len(v) <= 64 && strings.Trim(strings.ToLower(v), "0123456789abcdef") == ""
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkTravel enforces what an engine that travels needs.
func (s *Spec) checkTravel() error {
	n := 0
	for _, v := range []string{s.Upload, s.Source, s.Artifact} {
		if v != "" {
			n++
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("engine %s: upload=, source= and artifact= exclude each other", clip(s.Name))
	case s.Cmd != "" || s.Proto == Builtin || s.Dir != "":
		return fmt.Errorf("engine %s: upload=, source= and artifact= replace cmd=, builtin and dir=", clip(s.Name))
	case s.Upload != "" && (s.Build != "" || s.Exe != ""):
		return fmt.Errorf("engine %s: build= and exe= go with source= (upload= sends a program)", clip(s.Name))
	case s.Source != "" && s.Build == "":
		return fmt.Errorf("engine %s: source= needs build=CMD (e.g. build=\"make -j EXE=engine\")", clip(s.Name))
	}
	return nil
}

// KeyValue is one item of a spec: Key=Value, or a bare word (Bare, the
// word in Key).
type KeyValue struct {
	Key, Value string
	Bare       bool
}

// Items cuts s into its items with this grammar's quoting and escapes,
// for grammars built on it (a worker's --engine-allow).
func Items(s string) ([]KeyValue, error) {
	items, err := split(s)
	if err != nil {
		return nil, err
	}
	out := make([]KeyValue, len(items))
	for i, it := range items {
		out[i] = KeyValue{Key: it.key, Value: it.value, Bare: it.bare}
	}
	return out, nil
}
