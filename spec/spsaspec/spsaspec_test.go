package spsaspec

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spsa"
)

func TestConversions(t *testing.T) {
	ps := []spsa.Param{{Name: "A", Start: 1, Min: 0, Max: 10, CEnd: 1, REnd: 0.002}, {Name: "F", Float: true, Start: 0.5, Max: 1, CEnd: 0.1, REnd: 0.01}}
	if back := ParamsFromProto(ParamsToProto(ps)); !slices.Equal(back, ps) {
		t.Fatalf("round trip: %+v", back)
	}
	spec := &arbiterv1.SpsaSpec{Params: ParamsToProto(ps), Pairs: 100, BatchPairs: 4, Seed: 9, Gamma: proto.Float64(0)}
	c := Config(spec)
	if c.Alpha != spsa.DefaultAlpha || c.Gamma != 0 || c.ARatio != spsa.DefaultARatio || c.Pairs != 100 || c.BatchPairs != 4 || c.Seed != 9 {
		t.Fatalf("config: %+v", c)
	}
	d := WithDefaults(spec)
	if d.GetAlpha() != spsa.DefaultAlpha || d.Gamma == nil || d.GetGamma() != 0 || spec.Alpha != nil {
		t.Fatalf("defaults: %v (spec %v)", d, spec)
	}
	j := &arbiterv1.Job{JobId: "t1", Kind: "spsa", Spsa: spec, SpsaProgress: &arbiterv1.SpsaProgress{Params: []*arbiterv1.SpsaParamState{
		{Name: "A", Current: 6.6}, {Name: "F", Current: 0.25}}}}
	gotPs, theta, err := Current(j)
	if err != nil || !slices.Equal(gotPs, ps) || !slices.Equal(theta, []float64{6.6, 0.25}) {
		t.Fatalf("current: %v %v %v", gotPs, theta, err)
	}
	if out, err := spsa.Export(spsa.OpenBench, gotPs, theta); err != nil || out != "A, int, 7, 0, 10, 1, 0.002\nF, float, 0.25, 0, 1, 0.1, 0.01\n" {
		t.Errorf("export: %q %v", out, err)
	}
	if _, _, err := Current(&arbiterv1.Job{JobId: "s1", Kind: "sprt"}); err == nil || !strings.Contains(err.Error(), "not an SPSA tune") {
		t.Errorf("a test: %v", err)
	}
	j.SpsaProgress.Params[1].Name = "G"
	if _, _, err := Current(j); err == nil {
		t.Error("mismatched names exported")
	}
}
