package jobreport

// The JSON of jobs as `arbiter status --json` and `arbiter submit sprt|match
// --wait --json` print it (docs/json.md, schema docs/json/job.schema.json):
// the same key for the same thing as in `arbiter perft --json` and `arbiter
// sprt --json`, exact counts as JSON integers, states in lower case, and
// numbers that are not finite (an Elo of a test without a loss) as null.

import (
	"encoding/json"
	"io"
	"math"
	"sort"
	"time"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// JobJSON is one job of any kind: a built-in family's typed field (Perft,
// Test or Tune) as Kind says, or the kind's own Detail object, produced by
// the report its folder registered (Report.DetailJSON).
type JobJSON struct {
	JobID         string     `json:"job_id"`
	Kind          string     `json:"kind"`
	State         string     `json:"state"`
	Submitter     string     `json:"submitter,omitempty"`
	CreatedAt     string     `json:"created_at,omitempty"`
	FinishedAt    string     `json:"finished_at,omitempty"`
	Error         string     `json:"error,omitempty"`
	Blocked       string     `json:"blocked,omitempty"`
	ActiveWorkers uint32     `json:"active_workers"`
	Perft         *PerftJob  `json:"perft,omitempty"`
	Test          *TestJob   `json:"test,omitempty"`
	Tune          *TuneJob   `json:"tune,omitempty"`
	Detail        any        `json:"detail,omitempty"`
	Workers       []WorkerIn `json:"workers,omitempty"`
}

// PerftJob is a perft job; fen, depth, nodes and divide as in `arbiter
// perft --json`. Nodes is null until the job is done.
type PerftJob struct {
	FEN               string                 `json:"fen"`
	Depth             uint32                 `json:"depth"`
	SplitPly          uint32                 `json:"split_ply"`
	VerifyFraction    float64                `json:"verify_fraction"`
	Chess960          bool                   `json:"chess960"`
	Nodes             *json.Number           `json:"nodes"`
	NodesDone         json.Number            `json:"nodes_done"`
	Units             uint64                 `json:"units"`
	UnitsDone         uint64                 `json:"units_done"`
	UnitsVerified     uint64                 `json:"units_verified"`
	Positions         uint64                 `json:"positions"`
	Mismatches        uint64                 `json:"mismatches"`
	MismatchesSettled uint64                 `json:"mismatches_settled"`
	Verification      string                 `json:"verification,omitempty"`
	Divide            map[string]json.Number `json:"divide,omitempty"`
	Slices            uint32                 `json:"slices,omitempty"`
	Stats             *PerftStatsJSON        `json:"stats,omitempty"`
	CrossCheck        *CrossCheckJSON        `json:"cross_check,omitempty"`
	// Suite is a suite job's per-position table (divide is then left out).
	Suite *SuiteJSON `json:"suite,omitempty"`
}

// CrossCheckJSON is a perft job's cross-check by another program.
type CrossCheckJSON struct {
	Engine       string              `json:"engine"`
	Fraction     float64             `json:"fraction"`
	UnitsSampled uint64              `json:"units_sampled"`
	UnitsChecked uint64              `json:"units_checked"`
	UnitsAgreed  uint64              `json:"units_agreed"`
	RunsByWorker map[string]uint64   `json:"runs_by_worker"`
	Mismatches   []CrossMismatchJSON `json:"mismatches"`
}

// CrossMismatchJSON is one unit where the program and our generator
// counted different nodes: the first such position, both counts and who.
type CrossMismatchJSON struct {
	Unit          string      `json:"unit"`
	FEN           string      `json:"fen"`
	Depth         uint32      `json:"depth"`
	Ours          json.Number `json:"ours"`
	OurWorker     string      `json:"our_worker"`
	OurIdentity   string      `json:"our_identity"`
	Theirs        json.Number `json:"theirs"`
	TheirWorker   string      `json:"their_worker"`
	TheirIdentity string      `json:"their_identity"`
	Settled       bool        `json:"settled"`
	Outvoted      []string    `json:"outvoted"`
}

func newCrossCheck(c *arbiterv1.PerftCrossCheck) *CrossCheckJSON {
	if c == nil {
		return nil
	}
	o := &CrossCheckJSON{Engine: c.GetEngine(), Fraction: c.GetFraction(), UnitsSampled: c.GetUnitsSampled(),
		UnitsChecked: c.GetUnitsChecked(), UnitsAgreed: c.GetUnitsAgreed(), RunsByWorker: map[string]uint64{},
		Mismatches: []CrossMismatchJSON{}}
	for w, n := range c.GetRunsByWorker() {
		o.RunsByWorker[w] = n
	}
	for _, m := range c.GetMismatches() {
		o.Mismatches = append(o.Mismatches, CrossMismatchJSON{Unit: m.GetUnitId(), FEN: m.GetFen(), Depth: m.GetDepth(),
			Ours: number(m.GetOurs()), OurWorker: m.GetOurWorker(), OurIdentity: m.GetOurIdentity(),
			Theirs: number(m.GetTheirs()), TheirWorker: m.GetTheirWorker(), TheirIdentity: m.GetTheirIdentity(),
			Settled: m.GetSettled(), Outvoted: append([]string{}, m.GetOutvoted()...)})
	}
	return o
}

// EngineJSON is an engine of a test or tune.
type EngineJSON struct {
	Name     string            `json:"name"`
	Command  string            `json:"command"`
	Args     []string          `json:"args,omitempty"`
	Protocol string            `json:"protocol,omitempty"`
	Options  map[string]string `json:"options,omitempty"`
	// TC is the engine's own limits (time odds), when it has any.
	TC string `json:"tc,omitempty"`
	// Artifact is an uploaded engine's artifact (command is "" then).
	Artifact *ArtifactJSON `json:"artifact,omitempty"`
	// Net is the net the engine loads, when the test gives it one.
	Net *NetJSON `json:"net,omitempty"`
}

// NetJSON is the net an engine of a test loads.
type NetJSON struct {
	SHA256 string `json:"sha256"`
	Name   string `json:"name"`
	Size   uint64 `json:"size"`
	Option string `json:"option"` // the engine option that takes its path
}

// ArtifactJSON is the uploaded engine a test or tune plays.
type ArtifactJSON struct {
	SHA256   string `json:"sha256"`
	Kind     string `json:"kind"` // binary or source
	Name     string `json:"name"`
	Platform string `json:"platform,omitempty"`
	Build    string `json:"build,omitempty"`
	Exe      string `json:"exe,omitempty"`
	Bench    uint64 `json:"bench,omitempty"`
	Commit   string `json:"commit,omitempty"`
}

// SPRTJSON is a test's SPRT: the design and where the LLR stands, keyed
// as in `arbiter sprt --json`.
type SPRTJSON struct {
	Elo0       float64  `json:"elo0"`
	Elo1       float64  `json:"elo1"`
	Alpha      float64  `json:"alpha"`
	Beta       float64  `json:"beta"`
	Model      string   `json:"elo_model"`
	LLR        *float64 `json:"llr"`
	LowerBound float64  `json:"lower_bound"`
	UpperBound float64  `json:"upper_bound"`
	State      string   `json:"state"` // continue, accepted or rejected
}

// TestJob is an SPRT test or a fixed-games match between two engines.
type TestJob struct {
	Engines     [2]EngineJSON `json:"engines"`
	TC          string        `json:"tc"`
	Book        string        `json:"book"`
	Openings    uint32        `json:"openings"`
	GamesMax    uint64        `json:"games_max"`
	Games       uint64        `json:"games"`
	Wins        uint64        `json:"wins"`
	Draws       uint64        `json:"draws"`
	Losses      uint64        `json:"losses"`
	Pentanomial [5]uint64     `json:"pentanomial"`
	Elo         *float64      `json:"elo"`
	EloCI95     [2]*float64   `json:"elo_ci95"`
	LOS         *float64      `json:"los"`
	NElo        *float64      `json:"nelo"`
	NEloHalf95  *float64      `json:"nelo_halfwidth95"`
	SPRT        *SPRTJSON     `json:"sprt,omitempty"`
	Batches     uint64        `json:"batches_done"`
	BatchPairs  uint32        `json:"batch_pairs"`
	PGNs        uint64        `json:"pgns"`
	// StoppedByHand: an SPRT stopped by hand before a bound, whose error
	// rates no longer hold.
	StoppedByHand bool `json:"stopped_by_hand,omitempty"`
	// Anytime is the anytime-valid interval (docs/sprt-cluster.md), valid
	// however the test was stopped; null before any game.
	Anytime *AnytimeJSON `json:"anytime,omitempty"`
	// StopPrecision is --stop precision= (0: none); StoppedByPrecision
	// says it ended the test.
	StopPrecision      float64 `json:"stop_precision,omitempty"`
	StoppedByPrecision bool    `json:"stopped_by_precision,omitempty"`
	// Group is the group of takes the test is a take of.
	Group           *GroupJSON `json:"group,omitempty"`
	Tags            []string   `json:"tags,omitempty"`
	Notes           string     `json:"notes,omitempty"`
	RescheduledFrom string     `json:"rescheduled_from,omitempty"`
	RescheduledAs   []string   `json:"rescheduled_as,omitempty"`
}

// AnytimeJSON is a test's anytime-valid interval at its level.
type AnytimeJSON struct {
	Level float64     `json:"level"`
	Elo   [2]*float64 `json:"elo"`
	NElo  [2]*float64 `json:"nelo"`
}

// GroupJSON is a group of takes of one idea: each take's SPRT runs at
// alpha/takes.
type GroupJSON struct {
	Name      string          `json:"name"`
	Takes     uint32          `json:"takes"`
	TakeAlpha float64         `json:"take_alpha"`
	Members   []GroupTakeJSON `json:"members"`
}

// GroupTakeJSON is one take of a group.
type GroupTakeJSON struct {
	JobID     string  `json:"job_id"`
	Kind      string  `json:"kind"`
	State     string  `json:"state"`
	SPRTState string  `json:"sprt_state,omitempty"`
	Alpha     float64 `json:"alpha"`
	Games     uint64  `json:"games"`
}

// TuneJob is an SPSA tune, filled in by the SPSA kind's report
// (kinds/spsa) for one release.
type TuneJob struct {
	Engine      EngineJSON  `json:"engine"`
	TC          string      `json:"tc"`
	Pairs       uint64      `json:"pairs"`
	PairsDone   uint64      `json:"pairs_done"`
	Updates     uint64      `json:"updates"`
	Games       uint64      `json:"games"`
	Wins        uint64      `json:"wins"`
	Draws       uint64      `json:"draws"`
	Losses      uint64      `json:"losses"`
	Pentanomial [5]uint64   `json:"pentanomial"`
	Params      []TuneParam `json:"params"`
	// Verifications are the tests of the tune's values against its start
	// values (spsa verify), in submission order.
	Verifications []TuneVerification `json:"verifications,omitempty"`
}

// TuneVerification is one test of a tune's values against its start
// values, with the test's own figures.
type TuneVerification struct {
	JobID     string      `json:"job_id"`
	Kind      string      `json:"kind"`
	State     string      `json:"state"`
	Updates   uint64      `json:"updates"`
	Games     uint64      `json:"games"`
	Wins      uint64      `json:"wins"`
	Draws     uint64      `json:"draws"`
	Losses    uint64      `json:"losses"`
	Elo       *float64    `json:"elo"`
	EloCI95   [2]*float64 `json:"elo_ci95"`
	SPRTState string      `json:"sprt_state,omitempty"`
}

// TuneParam is one tuned parameter's current value and range.
type TuneParam struct {
	Name    string  `json:"name"`
	Start   float64 `json:"start"`
	Current float64 `json:"current"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
}

// WorkerIn is what one worker did for a test or tune.
type WorkerIn struct {
	WorkerID     string   `json:"worker_id"`
	Name         string   `json:"name"`
	BenchNPS     uint64   `json:"bench_nps"`
	TimeScale    *float64 `json:"time_scale"`
	Games        uint64   `json:"games"`
	TimeLosses   uint64   `json:"time_losses"`
	Crashes      uint64   `json:"crashes"`
	IllegalMoves uint64   `json:"illegal_moves"`
	Disconnects  uint64   `json:"disconnects"`
	Other        uint64   `json:"other"`
	Excluded     bool     `json:"excluded"`
	Reason       string   `json:"reason,omitempty"`
	// Residual is the worker's standardized chi-squared residual in the
	// test, once there are enough game pairs.
	Residual *float64 `json:"residual,omitempty"`
}

// JobsJSON is `arbiter status --json`: the list.
type JobsJSON struct {
	Jobs []JobJSON `json:"jobs"`
}

// WriteJob writes one job as one JSON line.
func WriteJob(w io.Writer, j *arbiterv1.Job) error { return json.NewEncoder(w).Encode(NewJobJSON(j)) }

// WriteJobs writes a list of jobs as one JSON line.
func WriteJobs(w io.Writer, jobs []*arbiterv1.Job) error {
	out := JobsJSON{Jobs: make([]JobJSON, 0, len(jobs))}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, NewJobJSON(j))
	}
	return json.NewEncoder(w).Encode(out)
}

// NewJobJSON converts a job from the coordinator.
func NewJobJSON(j *arbiterv1.Job) JobJSON {
	p := j.GetProgress()
	o := JobJSON{JobID: j.GetJobId(), Kind: j.GetKind(), State: StateName(j.GetState()), Submitter: j.GetSubmitter(),
		Error: j.GetError(), Blocked: p.GetBlocked(), ActiveWorkers: p.GetActiveWorkers()}
	if t := j.GetCreatedAt(); t != nil {
		o.CreatedAt = t.AsTime().UTC().Format(time.RFC3339Nano)
	}
	if t := j.GetFinishedAt(); t != nil {
		o.FinishedAt = t.AsTime().UTC().Format(time.RFC3339Nano)
	}
	if r, ok := ReportOf(jobkind.Of(j).Family); ok {
		if r.DetailJSON != nil {
			o.Detail = r.DetailJSON(j)
		}
		if r.JSON != nil {
			r.JSON(&o, j)
		}
	}
	return o
}

func newPerftJob(j *arbiterv1.Job) *PerftJob {
	s, p := j.GetPerft(), j.GetProgress()
	o := &PerftJob{FEN: s.GetFen(), Depth: s.GetDepth(), SplitPly: s.GetSplitPly(), VerifyFraction: s.GetVerifyFraction(),
		Chess960: s.GetChess960(), NodesDone: number(p.GetNodesDone()), Units: p.GetUnitsTotal(), UnitsDone: p.GetUnitsDone(),
		UnitsVerified: p.GetUnitsVerified(), Positions: p.GetPositions(), Mismatches: p.GetMismatches(),
		MismatchesSettled: p.GetMismatchesSettled(), Verification: PerftVerification(j), CrossCheck: newCrossCheck(j.GetCrossCheck())}
	if j.GetNodes() != "" {
		n := number(j.GetNodes())
		o.Nodes = &n
		o.Stats = NewPerftStats(j)
	}
	if s.GetSlices() > 1 {
		o.Slices = s.GetSlices()
	}
	if o.Suite = NewSuiteJSON(j); o.Suite == nil && len(j.GetDivide()) > 0 {
		o.Divide = make(map[string]json.Number, len(j.GetDivide()))
		for _, d := range j.GetDivide() {
			o.Divide[d.GetMove()] = number(d.GetNodes())
		}
	}
	return o
}

// NewEngineJSON is an engine of a job as its JSON shows it.
func NewEngineJSON(e *arbiterv1.EngineSpec) EngineJSON {
	o := EngineJSON{Name: e.GetName(), Command: e.GetCommand(), Args: e.GetArgs(), Protocol: e.GetProtocol()}
	if len(e.GetOptions()) > 0 {
		o.Options = e.GetOptions()
	}
	if tc := e.GetTimeControl(); tc != nil {
		lim, _ := matchspec.LimitsFromProto(tc, 1)
		o.TC = lim.String()
	}
	if a := e.GetArtifact(); a != nil {
		o.Artifact = &ArtifactJSON{SHA256: a.GetSha256(), Kind: matchspec.ArtifactKindName(a.GetKind()), Name: a.GetName(), Platform: a.GetPlatform(), Build: a.GetBuild(),
			Exe: a.GetExe(), Bench: a.GetBench(), Commit: a.GetCommit()}
	}
	if n := e.GetNet(); n != nil {
		o.Net = &NetJSON{SHA256: n.GetSha256(), Name: n.GetName(), Size: n.GetSize(), Option: matchspec.NetOption(n)}
	}
	return o
}

// NewWorkers is what each worker did for a test or tune, by worker id:
// JobJSON.Workers.
func NewWorkers(ws []*arbiterv1.WorkerIncidents) []WorkerIn {
	var out []WorkerIn
	for _, w := range ws {
		out = append(out, WorkerIn{WorkerID: w.GetWorkerId(), Name: w.GetName(), BenchNPS: w.GetBenchNps(),
			TimeScale: Finite(w.GetTimeScale()), Games: w.GetGames(), TimeLosses: w.GetTimeLosses(), Crashes: w.GetCrashes(),
			IllegalMoves: w.GetIllegalMoves(), Disconnects: w.GetDisconnects(), Other: w.GetOther(), Excluded: w.GetExcluded(),
			Reason: w.GetReason()})
		if w.GetHasResidual() {
			out[len(out)-1].Residual = Finite(w.GetResidual())
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].WorkerID < out[b].WorkerID })
	return out
}

// Penta is a pentanomial as the JSON carries it: the proto's Ll, Ld, Dd,
// Wd, Ww in that order.
func Penta(p *arbiterv1.Pentanomial) [5]uint64 {
	return [5]uint64{p.GetLl(), p.GetLd(), p.GetDd(), p.GetWd(), p.GetWw()}
}

// number is a decimal count from the coordinator as a JSON integer ("0"
// when empty, as before the first unit).
func number(s string) json.Number {
	if s == "" {
		return "0"
	}
	return json.Number(s)
}

// Finite is x, or nil (null) when JSON cannot carry it.
func Finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
