package gamepair

import (
	"testing"

	"google.golang.org/protobuf/proto"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A snapshot's spec has no book but its size, and the spec it came from
// keeps its book; the stored form carries no openings_count.
func TestWithoutOpeningsAndEncodeSpec(t *testing.T) {
	ops := []*arbiterv1.Opening{{Index: 0, MovesUci: []string{"e2e4"}}, {Index: 1, MovesUci: []string{"d2d4"}}}
	for _, spec := range []GameSpec{
		&arbiterv1.MatchSpec{Openings: ops, Event: "e", OpeningsCount: 7},
		&arbiterv1.SpsaSpec{Openings: ops, Event: "e", OpeningsCount: 7},
	} {
		out := WithoutOpenings(spec)
		if len(out.GetOpenings()) != 0 || len(spec.GetOpenings()) != 2 || out.GetEvent() != "e" {
			t.Fatalf("%T: snapshot has %d openings, the spec %d", spec, len(out.GetOpenings()), len(spec.GetOpenings()))
		}
		count := out.ProtoReflect().Get(out.ProtoReflect().Descriptor().Fields().ByName("openings_count")).Uint()
		if count != 2 {
			t.Fatalf("%T: openings_count %d, want 2", spec, count)
		}
		b, err := encodeSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		back := spec.ProtoReflect().Type().New().Interface()
		if err := proto.Unmarshal(b, back); err != nil {
			t.Fatal(err)
		}
		stored := back.ProtoReflect().Get(back.ProtoReflect().Descriptor().Fields().ByName("openings_count")).Uint()
		if stored != 0 || len(back.(GameSpec).GetOpenings()) != 2 {
			t.Fatalf("%T: stored openings_count %d with %d openings", spec, stored, len(back.(GameSpec).GetOpenings()))
		}
	}
}
