package gamepair

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// GameSpec is what the specs of every game job (MatchSpec, SpsaSpec) say
// alike: the book and its order, the event, the share of the farm, the
// reference speed and the clock's margins.
type GameSpec interface {
	BookSpec
	GetBookName() string
	GetEvent() string
	GetBookOrder() string
	GetSeed() uint64
	GetBookStart() uint32
	GetChess960() bool
	GetPriority() int32
	GetThroughput() float64
	GetReferenceNps() uint64
	GetTimeMargin() *durationpb.Duration
	GetHangTimeout() *durationpb.Duration
	GetAdjudication() *arbiterv1.Adjudication
}

// CheckBook checks the names in spec (its book's, its event's, its book
// order's, and more of the workload's own) and its book, and returns the
// openings in the order of play. Every refusal is an *apierr.Error naming
// the input.
func CheckBook(spec GameSpec, more ...Text) ([]*arbiterv1.Opening, error) {
	texts := append([]Text{{What: "book name", S: spec.GetBookName(), Max: MaxNameBytes},
		{What: "event", S: spec.GetEvent(), Max: MaxNameBytes},
		{What: "book order", S: spec.GetBookOrder(), Max: MaxWordBytes}}, more...)
	if err := CheckText(texts...); err != nil {
		return nil, err
	}
	return CheckOpenings(Book{Openings: spec.GetOpenings(), Name: spec.GetBookName(), Order: spec.GetBookOrder(),
		Seed: spec.GetSeed(), Start: int(spec.GetBookStart()), Chess960: spec.GetChess960()})
}

// CheckRun checks how spec is to be run: its share of the farm (none
// given is 1, set in spec), its reference speed and the clock's margins.
func CheckRun(spec GameSpec) error {
	if err := CheckShare(spec.GetThroughput()); err != nil {
		return err
	}
	if spec.GetThroughput() == 0 {
		m := spec.ProtoReflect()
		m.Set(m.Descriptor().Fields().ByName("throughput"), protoreflect.ValueOfFloat64(1))
	}
	if err := CheckReferenceNPS(spec.GetReferenceNps()); err != nil {
		return err
	}
	if err := CheckTablebase(spec.GetAdjudication()); err != nil {
		return err
	}
	return CheckMargins(spec.GetTimeMargin(), spec.GetHangTimeout())
}

// encodeSpec is a checked spec as stored: without openings_count, which
// the coordinator fills in for snapshots.
func encodeSpec(spec GameSpec) ([]byte, error) {
	m := spec.ProtoReflect()
	m.Clear(m.Descriptor().Fields().ByName("openings_count"))
	b, err := proto.Marshal(spec)
	if err != nil {
		return nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "encode spec: %v", err)
	}
	return b, nil
}
