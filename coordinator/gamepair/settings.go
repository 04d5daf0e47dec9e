package gamepair

import (
	"slices"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// Settings tune what both game workloads (tests and SPSA tunes) do alike:
// how a job that fixes no batch size gets one, and when a worker gets no
// more batches of a job. Zero values take the defaults (Defaults).
type Settings struct {
	// ReferenceNPS is the bench speed a job's clock is meant for when the
	// job names none (DefaultReferenceNPS).
	ReferenceNPS uint64
	// BatchDuration is the wall time a batch should take when the job does
	// not fix its batch size (30s).
	BatchDuration time.Duration
	// MaxAutoBatchPairs bounds automatic batch sizes (32).
	MaxAutoBatchPairs int
	// IncidentWindow is the number of a worker's most recent games of a job
	// over which its incident rate is judged (40), once it has played half
	// of them.
	IncidentWindow int
	// IncidentMaxRate is the share of those games with a worker-caused
	// incident (time loss, hang, lost lease) above which the worker gets no
	// more batches of the job (0.2).
	IncidentMaxRate float64
	// SkipGameReplay accepts batch results without replaying their games
	// (ReplayBatch): only for unit tests of scheduling and counting that
	// submit made-up games. No coordinator flag sets it.
	SkipGameReplay bool
	// Syzygy are the coordinator's tablebases (--syzygy): the replay checks
	// a batch's tablebase adjudications against them (nil: see replay.go).
	Syzygy match.TBProber
	// ReplayFraction is the share of a fixed-node test's batches that a
	// worker of another identity plays again before they count, where both
	// engines are deterministic at fixed nodes (CrossCheckable,
	// crosscheck.go). 0: none (the coordinator's --replay-fraction sets it).
	ReplayFraction float64
	// DeterministicEngines are the commands of UCI engines the operator
	// declares deterministic at a fixed node count when single-threaded
	// (--replay-deterministic); the embedded engine is without saying.
	DeterministicEngines []string
	// ResidualLimit is the residual (residual.go) above which a worker is
	// excluded from a test for its results (DefaultResidualLimit); a
	// negative value judges none. ResidualMinPairs is the game pairs a
	// worker must have played in the test before (DefaultResidualMinPairs).
	ResidualLimit    float64
	ResidualMinPairs int64
}

// Defaults fills in the zero values.
func (s *Settings) Defaults() {
	if s.ReferenceNPS == 0 {
		s.ReferenceNPS = DefaultReferenceNPS
	}
	if s.BatchDuration <= 0 {
		s.BatchDuration = 30 * time.Second
	}
	if s.MaxAutoBatchPairs <= 0 {
		s.MaxAutoBatchPairs = 32
	}
	if s.IncidentWindow <= 0 {
		s.IncidentWindow = 40
	}
	if s.IncidentMaxRate <= 0 {
		s.IncidentMaxRate = 0.2
	}
	if s.ResidualLimit == 0 {
		s.ResidualLimit = DefaultResidualLimit
	}
	if s.ResidualMinPairs <= 0 {
		s.ResidualMinPairs = DefaultResidualMinPairs
	}
}

// Reference is the speed a job's clock is meant for: the job's own
// reference speed (specNPS), or ReferenceNPS when it names none.
func (s *Settings) Reference(specNPS uint64) uint64 {
	if specNPS != 0 {
		return specNPS
	}
	return s.ReferenceNPS
}

// AutoBatchPairs is the batch size of a job under lim that fixes none: a
// batch takes about BatchDuration at the job's reference speed.
func (s *Settings) AutoBatchPairs(lim match.Limits, specNPS uint64) int {
	return AutoBatchPairs(lim, s.Reference(specNPS), s.BatchDuration, s.MaxAutoBatchPairs)
}

// Replay is ReplayBatch of a result that CheckResult accepted, unless
// SkipGameReplay.
func (s *Settings) Replay(unit string, b *arbiterv1.GamePairBatch, r *arbiterv1.GamePairBatchResult) error {
	if s.SkipGameReplay {
		return nil
	}
	return ReplayBatchTables(unit, b, r, s.Syzygy)
}

// NewWorkers is a job's empty record of workers, judged over
// IncidentWindow games at IncidentMaxRate.
func (s *Settings) NewWorkers() *Workers { return NewWorkers(s.IncidentWindow, s.IncidentMaxRate) }

// NewJudgedWorkers is NewWorkers that also judges workers by their
// results (residual.go): for tests, whose two engines stay the same.
func (s *Settings) NewJudgedWorkers() *Workers {
	ws := s.NewWorkers()
	if s.ResidualLimit > 0 {
		ws.SetResidualJudge(ResidualSettings{Limit: s.ResidualLimit, MinPairs: s.ResidualMinPairs})
	}
	return ws
}

// CrossCheckable reports whether a test's games are a function of its
// batches, so that another identity can replay them move for move: both
// engines play at a fixed node count (the test's or their own limits) and
// are deterministic there: the embedded engine, or a UCI engine of
// DeterministicEngines run as it is named (no uploaded artifact), each
// with one thread (no Threads option, or Threads=1).
func (s *Settings) CrossCheckable(tc *arbiterv1.TimeControl, engines ...*arbiterv1.EngineSpec) bool {
	for _, e := range engines {
		if _, nodes := matchspec.EngineTimeControl(tc, e).GetKind().(*arbiterv1.TimeControl_Nodes); !nodes {
			return false
		}
		for k, v := range e.GetOptions() {
			if strings.EqualFold(k, "Threads") && strings.TrimSpace(v) != "1" {
				return false
			}
		}
		switch {
		case matchspec.IsBuiltin(e):
		case e.GetArtifact() == nil && (e.GetProtocol() == "" || e.GetProtocol() == "uci") && slices.Contains(s.DeterministicEngines, e.GetCommand()):
		default:
			return false
		}
	}
	return len(engines) > 0
}
