// Package spsaspec converts between package spsa's types and the wire's
// (SpsaParam, SpsaSpec, SpsaProgress), so that the coordinator's workload,
// the CLI that submits a tune and the one that exports its values mean the
// same thing by each field.
package spsaspec

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spsa"
)

// ParamsToProto renders parameters for a spec.
func ParamsToProto(ps []spsa.Param) []*arbiterv1.SpsaParam {
	out := make([]*arbiterv1.SpsaParam, len(ps))
	for i, p := range ps {
		out[i] = &arbiterv1.SpsaParam{Name: p.Name, IsFloat: p.Float, Start: p.Start, Min: p.Min, Max: p.Max, CEnd: p.CEnd, REnd: p.REnd}
	}
	return out
}

// ParamsFromProto reads a spec's parameters (unchecked: spsa.CheckParams
// or spsa.New check them).
func ParamsFromProto(ps []*arbiterv1.SpsaParam) []spsa.Param {
	out := make([]spsa.Param, len(ps))
	for i, p := range ps {
		out[i] = spsa.Param{Name: p.GetName(), Float: p.GetIsFloat(), Start: p.GetStart(), Min: p.GetMin(), Max: p.GetMax(),
			CEnd: p.GetCEnd(), REnd: p.GetREnd()}
	}
	return out
}

// Config is the tune's design of spec, Fishtest's alpha, gamma and A ratio
// where the spec leaves them unset. The batch size is the spec's (the
// coordinator fills it in when it is 0).
func Config(spec *arbiterv1.SpsaSpec) spsa.Config {
	c := spsa.Config{Params: ParamsFromProto(spec.GetParams()), Pairs: int(spec.GetPairs()), BatchPairs: int(spec.GetBatchPairs()),
		Alpha: spsa.DefaultAlpha, Gamma: spsa.DefaultGamma, ARatio: spsa.DefaultARatio, Seed: spec.GetSeed()}
	if spec.Alpha != nil {
		c.Alpha = spec.GetAlpha()
	}
	if spec.Gamma != nil {
		c.Gamma = spec.GetGamma()
	}
	if spec.ARatio != nil {
		c.ARatio = spec.GetARatio()
	}
	return c
}

// WithDefaults returns a copy of spec with alpha, gamma and A ratio set
// (Fishtest's where unset).
func WithDefaults(spec *arbiterv1.SpsaSpec) *arbiterv1.SpsaSpec {
	out := proto.Clone(spec).(*arbiterv1.SpsaSpec)
	c := Config(spec)
	out.Alpha, out.Gamma, out.ARatio = proto.Float64(c.Alpha), proto.Float64(c.Gamma), proto.Float64(c.ARatio)
	return out
}

// Current is a tune's parameters and θ now, from its snapshot: what
// `spsa export` prints with spsa.Export.
func Current(j *arbiterv1.Job) ([]spsa.Param, []float64, error) {
	spec, prog := j.GetSpsa(), j.GetSpsaProgress()
	if spec == nil || prog == nil {
		return nil, nil, fmt.Errorf("job %s is not an SPSA tune (kind %q)", j.GetJobId(), j.GetKind())
	}
	ps := ParamsFromProto(spec.GetParams())
	if len(prog.GetParams()) != len(ps) {
		return nil, nil, fmt.Errorf("tune %s: %d parameters in its spec, %d in its progress", j.GetJobId(), len(ps), len(prog.GetParams()))
	}
	theta := make([]float64, len(ps))
	for i, st := range prog.GetParams() {
		if st.GetName() != ps[i].Name {
			return nil, nil, fmt.Errorf("tune %s: parameter %d is %q in its spec, %q in its progress", j.GetJobId(), i, ps[i].Name, st.GetName())
		}
		theta[i] = st.GetCurrent()
	}
	return ps, theta, nil
}
