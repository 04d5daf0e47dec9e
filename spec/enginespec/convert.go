package enginespec

import (
	"fmt"
	"slices"

	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/verify"
)

// LimitsOf applies limit settings in order to zero limits (the spec of
// --each: the match's limits).
func LimitsOf(settings []Setting) (match.Limits, error) {
	var l match.Limits
	for _, st := range settings {
		if _, err := l.ParseLimit(st.Key, st.Value); err != nil {
			return l, err
		}
	}
	return l, nil
}

// MatchEngine is the match library's engine for s, with each (the settings
// for both engines, or a zero Spec) under s's own: each's options first
// (s's replace those of the same name), each's proto unless s names one,
// and s's limits, when it has any, completing each's (time or node odds;
// zero limits mean the match's).
func (s Spec) MatchEngine(each Spec) (match.EngineConfig, error) {
	e := match.EngineConfig{Name: s.Name, Cmd: s.Cmd, Args: slices.Clone(s.Args), Dir: s.Dir, Proto: string(each.Proto), MovegenGate: s.MovegenGate,
		SyzygyPieces: s.SyzygyPieces}
	if s.Proto != "" {
		e.Proto = string(s.Proto)
	}
	if e.Proto == string(Builtin) {
		e.Cmd = ""
	}
	opts := Spec{Options: slices.Clone(each.Options)}
	for _, o := range s.Options {
		opts.SetOption(o.Key, o.Value)
	}
	for _, o := range opts.Options {
		e.Options = append(e.Options, match.Option{Name: o.Key, Value: o.Value})
	}
	if len(s.Limits) > 0 {
		label := s.Name
		if label == "" {
			label = s.Cmd
		}
		l, err := LimitsOf(append(slices.Clone(each.Limits), s.Limits...))
		if err != nil {
			return e, fmt.Errorf("engine %s: %v", clip(label), err)
		}
		if err := l.Validate(); err != nil {
			return e, fmt.Errorf("engine %s: %v", clip(label), err)
		}
		e.Limits = l
	}
	return e, nil
}

// VerifyEngine is verify's engine under test for s (UCI unless s says
// perftree).
func (s Spec) VerifyEngine() verify.EngineSpec {
	v := verify.EngineSpec{Cmd: s.Cmd, Args: slices.Clone(s.Args), Dir: s.Dir, Proto: string(s.Proto)}
	if v.Proto == "" {
		v.Proto = verify.ProtoUCI
	}
	for _, o := range s.Options {
		v.Options = append(v.Options, verify.Option{Name: o.Key, Value: o.Value})
	}
	return v
}

// ToProto is the wire form of s for a cluster test (limits do not travel:
// a test's time control is one for both engines).
func (s Spec) ToProto() *arbiterv1.EngineSpec {
	e, _ := Spec{Name: s.Name, Cmd: s.Cmd, Args: s.Args, Dir: s.Dir, Proto: s.Proto, Options: s.Options, MovegenGate: s.MovegenGate,
		SyzygyPieces: s.SyzygyPieces}.MatchEngine(Spec{})
	return matchspec.EngineToProto(e)
}

// FromProto is the spec of a wire engine (options in name order: the wire
// keeps them in a map).
func FromProto(p *arbiterv1.EngineSpec) Spec {
	e := matchspec.EngineFromProto(p)
	s := Spec{Name: e.Name, Cmd: e.Cmd, Args: slices.Clone(e.Args), Dir: e.Dir, Proto: Proto(e.Proto), MovegenGate: e.MovegenGate,
		SyzygyPieces: e.SyzygyPieces}
	for _, o := range e.Options {
		s.Options = append(s.Options, Setting{o.Name, o.Value})
	}
	return s
}

// NetProto is the wire form of s's net (nil without one): net=default
// becomes the default net of the engine's name; net=FILE gets its hash
// when the client uploads it (package artifactclient).
func (s Spec) NetProto() *arbiterv1.EngineNet {
	if !s.HasNet() {
		return nil
	}
	n := &arbiterv1.EngineNet{Sha256: s.Net, Option: s.NetOption}
	if s.Net == "default" {
		n.Sha256 = matchspec.DefaultNetPrefix + s.Name
	}
	return n
}
