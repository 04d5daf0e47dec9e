// Package verifyproto carries `arbiter verify` over the cluster: it converts
// between package verify's units and results and their protobuf form, names
// units by a digest of their content, parses the engine specs of workers
// and clients, and checks a worker's result for shape before the
// coordinator accepts it.
//
// Engines are named, not sent: a worker advertises the engines under test it
// has as capabilities "verify-engine:NAME" (arbiter worker --verify-engine
// name=NAME,cmd=PATH,...), a unit names the engine and adds arguments and
// UCI options, and the worker runs its own program for that name. The
// coordinator leases a unit only to a worker advertising its engine, and a
// client can never make a worker run a program the worker did not offer.
package verifyproto

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/textcheck"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/verify"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// ValidName reports whether name can name an engine under test.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// LocalEngine is an engine under test a worker has: the name it advertises
// and how to run it there.
type LocalEngine struct {
	Name string
	Spec verify.EngineSpec
}

func baseName(cmd string) string {
	// Both separators: a Windows worker's path seen anywhere.
	if i := strings.LastIndexAny(cmd, `/\`); i >= 0 {
		cmd = cmd[i+1:]
	}
	return strings.TrimSuffix(cmd, filepath.Ext(cmd))
}

// ParseLocalEngine reads a worker's --verify-engine (the grammar of
// spec/enginespec): "[name=NAME,]cmd=PATH[,args=...][,proto=uci|perftree]
// [,option.X=V][,dir=D]". NAME defaults to the program's base name. The
// program must exist and be executable here: a worker only advertises
// engines it can run.
func ParseLocalEngine(s string) (LocalEngine, error) {
	es, err := enginespec.Parse(s, enginespec.Verify)
	if err != nil {
		return LocalEngine{}, err
	}
	if es.Cmd == "" {
		return LocalEngine{}, fmt.Errorf("engine spec %q: no cmd=PATH: a worker runs a program of its own", clipSpec(s))
	}
	name := es.Name
	if name == "" {
		name = baseName(es.Cmd)
	}
	if !ValidName(name) {
		return LocalEngine{}, fmt.Errorf("engine spec %q: name %q: want 1 to 64 letters, digits, '.', '_', '+' or '-' (name=NAME)", clipSpec(s), clipSpec(name))
	}
	path, err := engineproc.LookPath(es.Cmd, es.Dir)
	if err != nil {
		return LocalEngine{}, fmt.Errorf("engine %q: %v", name, err)
	}
	spec := es.VerifyEngine()
	if spec.Dir == "" {
		// Absolute, so that it runs the same whatever the worker's cwd.
		if abs, err := filepath.Abs(path); err == nil {
			spec.Cmd = abs
		}
	}
	return LocalEngine{Name: name, Spec: spec}, nil
}

// ParseClientEngine reads the client's --engine in cluster mode: the spec
// of a local run, where name=NAME may stand for cmd=. The engine's name is
// NAME, else the base name of cmd; cmd itself is not sent (the workers have
// their own path for the name), args, proto and options are.
func ParseClientEngine(s string) (string, verify.EngineSpec, error) {
	es, err := enginespec.Parse(s, enginespec.Verify)
	if err != nil {
		return "", verify.EngineSpec{}, err
	}
	if es.Cmd == "" {
		es.Cmd = es.Name
	}
	name := es.Name
	if name == "" {
		name = baseName(es.Cmd)
	}
	spec := es.VerifyEngine()
	if !ValidName(name) {
		return "", spec, fmt.Errorf("engine spec %q: name %q: want 1 to 64 letters, digits, '.', '_', '+' or '-' (name=NAME)", clipSpec(s), clipSpec(name))
	}
	if spec.Dir != "" {
		return "", spec, fmt.Errorf("engine spec %q: dir= is the worker's business in cluster mode (arbiter worker --verify-engine ...,dir=D)", clipSpec(s))
	}
	return name, spec, nil
}

// clipSpec cuts user input repeated in an error to about 100 bytes.
func clipSpec(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// UnitProto is the unit that asks engine name (with spec's args, protocol
// and options) the query q.
func UnitProto(name string, spec verify.EngineSpec, q verify.Query, timeout time.Duration) *arbiterv1.VerifyUnit {
	e := &arbiterv1.VerifyEngine{Name: name, Args: spec.Args, Protocol: spec.Proto}
	for _, o := range spec.Options {
		e.Options = append(e.Options, &arbiterv1.VerifyOption{Name: o.Name, Value: o.Value})
	}
	u := &arbiterv1.VerifyUnit{
		Engine: e,
		Query:  &arbiterv1.VerifyQuery{Fen: q.FEN, Moves: q.Moves, Depth: uint32(q.Depth), Chess960: q.Chess960},
	}
	if timeout > 0 {
		u.Timeout = durationpb.New(timeout)
	}
	return u
}

// Key names a unit by its content: the same question gets the same key.
func Key(u *arbiterv1.VerifyUnit) string {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(u)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:12])
}

// Resolve turns a leased unit into the verify.Unit a worker runs with its
// local engine: the worker's program, its arguments then the unit's, its
// options then the unit's.
func Resolve(local LocalEngine, u *arbiterv1.VerifyUnit) verify.Unit {
	spec := local.Spec
	spec.Args = append(append([]string(nil), spec.Args...), u.GetEngine().GetArgs()...)
	spec.Options = append([]verify.Option(nil), spec.Options...)
	for _, o := range u.GetEngine().GetOptions() {
		spec.Options = append(spec.Options, verify.Option{Name: o.GetName(), Value: o.GetValue()})
	}
	if p := u.GetEngine().GetProtocol(); p != "" {
		spec.Proto = p
	}
	return verify.Unit{Engine: spec, Query: QueryFromProto(u.GetQuery()), Timeout: u.GetTimeout().AsDuration()}
}

// QueryFromProto converts a query.
func QueryFromProto(q *arbiterv1.VerifyQuery) verify.Query {
	return verify.Query{FEN: q.GetFen(), Moves: q.GetMoves(), Depth: int(q.GetDepth()), Chess960: q.GetChess960()}
}

// ResultProto is what a worker submits for an engine's answer (d, err).
func ResultProto(d verify.Divide, err error) *arbiterv1.VerifyUnitResult {
	if err != nil {
		ee := &arbiterv1.VerifyEngineError{Kind: "crash", Message: err.Error()}
		var e *verify.EngineError
		if errors.As(err, &e) {
			ee = &arbiterv1.VerifyEngineError{Kind: e.Kind, Message: e.Msg, Stderr: e.Stderr}
		}
		ee.Message = clip(ee.Message, maxMessage)
		ee.Stderr = clip(ee.Stderr, maxStderr)
		return &arbiterv1.VerifyUnitResult{EngineError: ee}
	}
	r := &arbiterv1.VerifyUnitResult{Total: d.Total.String()}
	for _, l := range d.Lines {
		r.Lines = append(r.Lines, &arbiterv1.VerifyDivideLine{Move: l.Move, Nodes: l.Nodes.String()})
	}
	return r
}

// ResultFromProto is the client's side of ResultProto: the divide, or a
// *verify.EngineError naming the engine and the query.
func ResultFromProto(r *arbiterv1.VerifyUnitResult, engineName string, q verify.Query) (verify.Divide, error) {
	if ee := r.GetEngineError(); ee != nil {
		return verify.Divide{}, &verify.EngineError{Engine: engineName, Query: &q, Kind: ee.GetKind(), Msg: ee.GetMessage(), Stderr: ee.GetStderr()}
	}
	if err := CheckResult(r); err != nil {
		return verify.Divide{}, err
	}
	t, _ := engine.ParseCount(r.GetTotal())
	d := verify.Divide{Total: t}
	for _, l := range r.GetLines() {
		n, _ := engine.ParseCount(l.GetNodes())
		d.Lines = append(d.Lines, verify.DivideLine{Move: l.GetMove(), Nodes: n})
	}
	return d, nil
}

const (
	maxLines   = 10000 // the adapters refuse more
	maxMessage = 4096
	maxStderr  = 4096
)

var (
	moveRE  = regexp.MustCompile(`^[a-h][1-8][a-h][1-8][nbrqNBRQ]?$`)
	countRE = regexp.MustCompile(`^[0-9]{1,39}$`)
	kinds   = map[string]bool{"start": true, "timeout": true, "crash": true, "garbage": true, "protocol": true}
)

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// CheckResult checks a result's shape: an engine error of a known kind with
// bounded text, or divide lines (UCI moves, exact decimal counts, at most
// 10,000) and a total. The counts themselves are the engine under test's
// claim and are not judged here; that is the descent's job.
func CheckResult(r *arbiterv1.VerifyUnitResult) error {
	if r == nil {
		return errors.New("verify result missing")
	}
	if ee := r.GetEngineError(); ee != nil {
		if len(r.GetLines()) > 0 || r.GetTotal() != "" {
			return errors.New("verify result has both an engine error and counts")
		}
		if !kinds[ee.GetKind()] {
			return fmt.Errorf("engine error kind %q: want start, timeout, crash, garbage or protocol", ee.GetKind())
		}
		if len(ee.GetMessage()) > maxMessage || len(ee.GetStderr()) > maxStderr {
			return errors.New("engine error text too long")
		}
		return nil
	}
	if len(r.GetLines()) > maxLines {
		return fmt.Errorf("verify result has %d divide lines; at most %d", len(r.GetLines()), maxLines)
	}
	if !countRE.MatchString(r.GetTotal()) {
		return fmt.Errorf("verify result total %q is not a decimal count", r.GetTotal())
	}
	if _, ok := engine.ParseCount(r.GetTotal()); !ok {
		return fmt.Errorf("verify result total %q out of range", r.GetTotal())
	}
	for i, l := range r.GetLines() {
		if !moveRE.MatchString(l.GetMove()) {
			return fmt.Errorf("verify result line %d: %q is not a UCI move", i, l.GetMove())
		}
		if !countRE.MatchString(l.GetNodes()) {
			return fmt.Errorf("verify result line %d (%s): %q is not a decimal count", i, l.GetMove(), l.GetNodes())
		}
		if _, ok := engine.ParseCount(l.GetNodes()); !ok {
			return fmt.Errorf("verify result line %d (%s): count %q out of range", i, l.GetMove(), l.GetNodes())
		}
	}
	return nil
}

// CheckUnit checks a unit a client asks for.
func CheckUnit(u *arbiterv1.VerifyUnit) error {
	if u == nil || u.GetEngine() == nil || u.GetQuery() == nil {
		return errors.New("unit, engine and query are required")
	}
	e := u.GetEngine()
	if !ValidName(e.GetName()) {
		return fmt.Errorf("engine name %q: want 1 to 64 letters, digits, '.', '_', '+' or '-'", e.GetName())
	}
	switch e.GetProtocol() {
	case "", verify.ProtoUCI, verify.ProtoPerftree:
	default:
		return fmt.Errorf("engine protocol %q: want uci or perftree", e.GetProtocol())
	}
	if len(e.GetArgs()) > 64 || len(e.GetOptions()) > 64 {
		return errors.New("at most 64 engine arguments and 64 options")
	}
	for i, a := range e.GetArgs() {
		if len(a) > 1024 {
			return errors.New("engine argument longer than 1024 bytes")
		}
		if err := textcheck.Check(fmt.Sprintf("engine args[%d]", i), a); err != nil {
			return err
		}
	}
	for _, o := range e.GetOptions() {
		if o.GetName() == "" || len(o.GetName()) > 256 || len(o.GetValue()) > 1024 {
			return fmt.Errorf("engine option %q: empty or too long", o.GetName())
		}
		if err := textcheck.Check(fmt.Sprintf("engine option name %q", o.GetName()), o.GetName()); err != nil {
			return err
		}
		if err := textcheck.Check(fmt.Sprintf("engine option %q value", o.GetName()), o.GetValue()); err != nil {
			return err
		}
	}
	q := u.GetQuery()
	if q.GetDepth() < 1 || q.GetDepth() > engine.MaxPerftDepth {
		return fmt.Errorf("depth %d: want 1..%d", q.GetDepth(), engine.MaxPerftDepth)
	}
	pos, err := engine.ParseFEN(q.GetFen())
	if err != nil {
		return fmt.Errorf("invalid FEN %q: %v", q.GetFen(), err)
	}
	if q.GetChess960() {
		pos.SetChess960(true)
	}
	if len(q.GetMoves()) > 1024 {
		return errors.New("more than 1024 moves")
	}
	for i, m := range q.GetMoves() {
		mv, err := pos.ParseUCIMove(m)
		if err != nil {
			return fmt.Errorf("move %d %q after %s: %v", i+1, m, strings.Join(q.GetMoves()[:i], " "), err)
		}
		pos.MakeMove(mv)
	}
	if t := u.GetTimeout(); t != nil && (t.AsDuration() < 0 || t.AsDuration() > 24*time.Hour) {
		return fmt.Errorf("timeout %v: want 0..24h", t.AsDuration())
	}
	return nil
}
