package worker_test

// A kind that plugs in through the runner registry alone, end to end: a
// real coordinator (localcluster, real gRPC on loopback) serves a made-up
// kind registered in this test binary (its coordinator side a small
// in-memory workload), and a real worker runs its units with a runner
// registered here too. The unit payloads are wrapperspb messages, which
// no real kind uses.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/worker"
)

const (
	// echoKind's units are StringValues the echo runner upper-cases; a
	// worker leases them only when it offers echoCapability.
	echoKind       = "fake-echo"
	echoCapability = "fake-echo-1"
	// unrunKind's units are Int64Values, which no runner takes.
	unrunKind = "fake-unrunnable"
)

// What the echo runner does with a unit's text besides upper-casing it.
const (
	echoRefuse   = "refuse"    // refuses the unit (worker.Refuse)
	echoFailOnce = "fail-once" // fails once with a plain error, then runs
	// echoMalformed is sent as bytes that do not unpack into a
	// StringValue; the workload offers it once.
	echoMalformed = "malformed"
)

var (
	echoWorkloads = map[string]*echoWorkload{}
	echoFailed    sync.Map // text -> true once its unit failed
)

func init() {
	for _, kind := range []string{echoKind, unrunKind} {
		wl := &echoWorkload{kind: kind, jobs: map[string]*echoJob{}}
		echoWorkloads[kind] = wl
		workload.Register(workload.Kind{
			Name:  kind,
			Spec:  func() proto.Message { return &wrapperspb.StringValue{} },
			New:   func(workload.Deps) (core.Workload, error) { return wl, nil },
			Runs:  workload.OperatorPrograms,
			Order: 1000,
		})
	}
	worker.RegisterRunner(worker.Runner{
		Unit:       func() proto.Message { return &wrapperspb.StringValue{} },
		Capability: echoCapability,
		Run:        runEcho,
	})
}

// runEcho is the echo kind's runner: it takes a core, then answers the
// unit's text upper-cased (or refuses, or fails once, as the text says).
func runEcho(ctx context.Context, host worker.Host, unit proto.Message) (proto.Message, error) {
	text := unit.(*wrapperspb.StringValue).GetValue()
	give, err := host.TakeCores(ctx)
	if err != nil {
		return nil, err
	}
	defer give()
	host.Logger().Info("echo", zap.String("text", text))
	switch {
	case text == echoRefuse:
		return nil, worker.Refuse(errors.New("echo refuses this unit"))
	case text == echoFailOnce:
		if _, failed := echoFailed.LoadOrStore(text, true); !failed {
			return nil, errors.New("echo failed once")
		}
	}
	return wrapperspb.String(strings.ToUpper(text)), nil
}

// echoJob is one job of a fake kind: one unit, whose payload is the
// spec's text (as a StringValue for echoKind, its length as an Int64Value
// for unrunKind).
type echoJob struct {
	id, text string
	seq      int64
	leased   bool
	over     bool
	ends     []core.End // the unit's leases that ended without a result
	results  []string   // the texts of the results accepted
}

// echoWorkload is the coordinator side of a fake kind, in memory.
type echoWorkload struct {
	kind string
	mu   sync.Mutex
	jobs map[string]*echoJob
	seq  int64
}

func (e *echoWorkload) Kind() string                                { return e.kind }
func (e *echoWorkload) Load(context.Context) ([]core.JobRef, error) { return nil, nil }

func (e *echoWorkload) Create(_ context.Context, spec any, submitter string) (core.JobRef, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	j := &echoJob{id: fmt.Sprintf("%s-%d", e.kind, e.seq), text: spec.(*wrapperspb.StringValue).GetValue(), seq: e.seq}
	e.jobs[j.id] = j
	return core.JobRef{ID: j.id, Seq: 1_000_000 + j.seq, Submitter: submitter}, nil
}

func (e *echoWorkload) Candidates(w *core.Worker, out []core.Candidate) []core.Candidate {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, j := range e.jobs {
		if !j.over && !j.leased {
			ready := e.kind != echoKind || w.Has(echoCapability)
			out = append(out, core.Candidate{JobID: j.id, Share: 1, Ready: ready})
		}
	}
	return out
}

func (e *echoWorkload) Take(jobID string, _ *core.Worker, _ time.Time) (string, any, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[jobID]
	if j == nil || j.over || j.leased {
		return "", nil, false
	}
	var payload proto.Message = wrapperspb.String(j.text)
	if e.kind == unrunKind {
		payload = wrapperspb.Int64(int64(len(j.text)))
	}
	packed, err := anypb.New(payload)
	if err != nil {
		return "", nil, false
	}
	if j.text == echoMalformed {
		packed.Value = []byte{0xff} // a field tag with no field
	}
	j.leased = true
	return j.id + "-u", &arbiterv1.WorkUnit{UnitId: j.id + "-u", JobId: j.id, Payload: &arbiterv1.WorkUnit_Plugin{Plugin: packed}}, true
}

func (e *echoWorkload) Ended(l core.Lease, why core.End) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if j := e.jobs[l.JobID]; j != nil {
		j.ends = append(j.ends, why)
		j.leased = false
		j.over = j.over || why.CannotRun || why.JobOver || j.text == echoMalformed
	}
}

func (e *echoWorkload) Locate(unitID string) (string, bool) {
	id, ok := strings.CutSuffix(unitID, "-u")
	return id, ok
}

func (e *echoWorkload) Adopt(core.Lease, *core.Worker) core.Adoption { return core.AdoptLost }

func (e *echoWorkload) Result(_ context.Context, r core.ResultCall) (core.Outcome, error) {
	got := &wrapperspb.StringValue{}
	if err := r.Result.(*anypb.Any).UnmarshalTo(got); err != nil {
		return core.Outcome{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[r.Lease.JobID]
	if j == nil || j.over {
		return core.Outcome{Verdict: core.Duplicate}, nil
	}
	j.results = append(j.results, got.GetValue())
	j.over, j.leased = true, false
	return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true, JobOver: true}, nil
}

func (e *echoWorkload) Cancel(_ context.Context, jobID, _ string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if j := e.jobs[jobID]; j != nil {
		j.over = true
	}
	return nil
}

func (e *echoWorkload) Snapshot(jobID string, _ bool) (any, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[jobID]
	if j == nil {
		return nil, false
	}
	state := arbiterv1.JobState_JOB_STATE_RUNNING
	if j.over {
		state = arbiterv1.JobState_JOB_STATE_DONE
	}
	return &arbiterv1.Job{JobId: j.id, Kind: e.kind, State: state}, true
}

func (e *echoWorkload) Stats() core.Stats { return core.Stats{} }

// String says what became of the job's unit: its results, and how many
// leases ended without one, with the first (a loop of them is long).
func (j echoJob) String() string {
	s := fmt.Sprintf("results %q, %d leases ended without one", j.results, len(j.ends))
	if len(j.ends) > 0 {
		s += fmt.Sprintf(", the first %+v", j.ends[0])
	}
	return s
}

// job returns a copy of a job's record once done says it is settled, or
// the last one seen when wait runs out.
func (e *echoWorkload) job(id string, wait time.Duration, done func(echoJob) bool) echoJob {
	deadline := time.Now().Add(wait)
	for {
		e.mu.Lock()
		j := *e.jobs[id]
		j.ends, j.results = append([]core.End(nil), j.ends...), append([]string(nil), j.results...)
		e.mu.Unlock()
		if done(j) || time.Now().After(deadline) {
			return j
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A unit whose payload type a registered runner takes is leased to a
// worker that offers the runner's capability, run by it, and its result
// counted once; a refusal and a plain failure end the lease as the runner
// said (cannot-run, or released to be leased again), and a payload that
// does not unpack is released saying so. The control: a unit
// of a type no runner takes is refused, with a reason naming the type.
func TestRunnerRegistryThroughCoordinator(t *testing.T) {
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 2, HashMB: 1, BenchNPS: 1_000_000,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond,
			Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	c, err := cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	jobs := arbiterv1.NewJobServiceClient(c.Conn())
	submit := func(kind, text string) string {
		t.Helper()
		spec, err := anypb.New(wrapperspb.String(text))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := jobs.SubmitJob(ctx, &arbiterv1.SubmitJobRequest{Kind: kind, Spec: spec})
		if err != nil {
			t.Fatalf("submit %s %q: %v", kind, text, err)
		}
		return resp.GetJob().GetJobId()
	}
	hello, refuse, failOnce := submit(echoKind, "hello"), submit(echoKind, echoRefuse), submit(echoKind, echoFailOnce)
	malformed, unrun := submit(echoKind, echoMalformed), submit(unrunKind, "xyz")

	const wait = 2 * time.Minute // a loaded machine; a pass takes well under a second
	echo, other := echoWorkloads[echoKind], echoWorkloads[unrunKind]
	if j := echo.job(hello, wait, func(j echoJob) bool { return j.over }); len(j.results) != 1 || j.results[0] != "HELLO" || len(j.ends) != 0 {
		t.Errorf("echo of %q: %s; want [HELLO] and no lease ended without it", "hello", j)
	}
	if j := echo.job(refuse, wait, func(j echoJob) bool { return j.over }); len(j.results) != 0 || len(j.ends) != 1 ||
		!j.ends[0].CannotRun || !strings.Contains(j.ends[0].Reason, "echo refuses this unit") {
		t.Errorf("refused unit: %s; want no result and one cannot-run end with the runner's reason", j)
	}
	if j := echo.job(failOnce, wait, func(j echoJob) bool { return j.over }); len(j.results) != 1 || j.results[0] != "FAIL-ONCE" ||
		len(j.ends) != 1 || j.ends[0].CannotRun || j.ends[0].Reason != "echo failed once" {
		t.Errorf("unit that failed once: %s; want [FAIL-ONCE] after one plain release", j)
	}
	if j := echo.job(malformed, wait, func(j echoJob) bool { return j.over }); len(j.results) != 0 || len(j.ends) != 1 ||
		j.ends[0].CannotRun || !strings.Contains(j.ends[0].Reason, "malformed unit of type google.protobuf.StringValue") {
		t.Errorf("malformed unit: %s; want one plain release saying it is malformed", j)
	}
	j := other.job(unrun, wait, func(j echoJob) bool { return j.over })
	if len(j.results) != 0 || len(j.ends) != 1 || !j.ends[0].CannotRun || !strings.Contains(j.ends[0].Reason, "google.protobuf.Int64Value") {
		t.Errorf("unit no runner takes: %s; want one cannot-run end whose reason names google.protobuf.Int64Value", j)
	}
}

// The registry refuses a runner with a field unset and a second runner
// for a payload type or a capability, and offers what is registered.
func TestRegisterRunnerRefusesMistakes(t *testing.T) {
	run := func(context.Context, worker.Host, proto.Message) (proto.Message, error) { return nil, nil }
	unit := func() proto.Message { return &wrapperspb.BoolValue{} }
	for name, r := range map[string]worker.Runner{
		"no unit":                 {Capability: "x-1", Run: run},
		"no capability":           {Unit: unit, Run: run},
		"no run":                  {Unit: unit, Capability: "x-1"},
		"payload type registered": {Unit: func() proto.Message { return &wrapperspb.StringValue{} }, Capability: "x-1", Run: run},
		"capability registered":   {Unit: unit, Capability: echoCapability, Run: run},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: RegisterRunner did not panic", name)
				}
			}()
			worker.RegisterRunner(r)
		}()
	}
	if caps := worker.RunnerCapabilities(); !slices.Contains(caps, echoCapability) || slices.Contains(caps, "x-1") {
		t.Errorf("runner capabilities %q: want %q and not x-1", caps, echoCapability)
	}
}
