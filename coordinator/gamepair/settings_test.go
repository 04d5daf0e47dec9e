package gamepair

import (
	"reflect"
	"testing"
	"time"
)

// Zero settings take the defaults; set ones stay; a job's own reference
// speed wins over the workload's.
func TestSettingsDefaults(t *testing.T) {
	var s Settings
	s.Defaults()
	if !reflect.DeepEqual(s, Settings{ReferenceNPS: DefaultReferenceNPS, BatchDuration: 30 * time.Second, MaxAutoBatchPairs: 32, IncidentWindow: 40, IncidentMaxRate: 0.2,
		ResidualLimit: DefaultResidualLimit, ResidualMinPairs: DefaultResidualMinPairs}) {
		t.Fatalf("defaults: %+v", s)
	}
	set := Settings{ReferenceNPS: 5, BatchDuration: time.Second, MaxAutoBatchPairs: 2, IncidentWindow: 4, IncidentMaxRate: 0.5,
		ReplayFraction: 0.5, DeterministicEngines: []string{"stockfish"}, ResidualLimit: -1, ResidualMinPairs: 3}
	got := set
	got.Defaults()
	if !reflect.DeepEqual(got, set) {
		t.Fatalf("set values changed: %+v", got)
	}
	if s.Reference(0) != DefaultReferenceNPS || s.Reference(7) != 7 {
		t.Fatalf("reference: %d, %d", s.Reference(0), s.Reference(7))
	}
}
