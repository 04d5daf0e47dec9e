package grpcapi

import (
	"context"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/jobfind"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

type jobService struct {
	arbiterv1.UnimplementedJobServiceServer
	s     *Server
	core  *core.Core
	games testview.Tests
	// started is when this server began: workers get workerGrace from
	// then to connect before a job is said to have none.
	started   time.Time
	arts      *artifacts.Store
	workloads map[string]core.Workload // by kind
	needers   []core.Workload          // the workloads, in kind order (needOf)
}

// noTests is the answer about a test of a coordinator whose program
// installed no test kind (kinds/test): it has none.
func noTests(jobID string) error {
	return apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown job %s: this coordinator runs no match or SPRT tests (no test kind installed)", apierr.Q(jobID))
}

// pgnSource is a workload whose jobs play games it keeps as PGN (the
// tests', the SPSA kind's tunes): DownloadPGN streams a job's games from
// the workload that has the job.
type pgnSource interface {
	Has(jobID string) bool
	PGNs(ctx context.Context, jobID string, fn func(pgn string) error) error
}

// addArtifactChecks adds what the workers did with a test's uploaded
// engines.
func (js *jobService) addArtifactChecks(ctx context.Context, j *arbiterv1.Job) error {
	m := j.GetMatch()
	if js.arts == nil || len(gamepair.ArtifactsOf(m.GetEngineA(), m.GetEngineB())) == 0 {
		return nil
	}
	checks, err := js.arts.Checks(ctx, j.GetJobId())
	if err != nil {
		return apierr.Store(err)
	}
	for _, c := range checks {
		p := &arbiterv1.ArtifactCheck{WorkerId: c.WorkerID, WorkerName: c.WorkerName, Engine: c.Engine, Sha256: c.SHA256,
			State: arbiterv1.ArtifactCheckState(c.State), Detail: c.Detail, Log: c.Log, Bench: c.Bench}
		if !c.At.IsZero() {
			p.At = timestamppb.New(c.At)
		}
		j.ArtifactChecks = append(j.ArtifactChecks, p)
	}
	return nil
}

// mayRead: clients and admins read jobs; workers do not need to.
func mayRead(id identity.Identity) error {
	if !id.CanSubmit() {
		return apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"credential %s has role %s, which may not read jobs", apierr.Q(id.Name), id.Role)
	}
	return nil
}

func (js *jobService) snapshot(id string, full bool) (*arbiterv1.Job, error) {
	snap, err := js.core.Job(id, full)
	if err != nil {
		return nil, err
	}
	j := js.withBlocked(snap.(*arbiterv1.Job))[0]
	// A tune shows the tests that verify it: they are the game workload's.
	if full && jobkind.Is(j, jobkind.FamilyTune) && js.games != nil {
		j.SpsaProgress.Verifications = js.games.Verifications(id)
	}
	return j, nil
}

// importGit fetches the engines named by a remote git URL before the job
// is created (artifacts.Store.ImportEngines): the job then names stored
// source artifacts, as if the client had uploaded them.
func (js *jobService) importGit(ctx context.Context, engines ...*arbiterv1.EngineSpec) error {
	if js.arts == nil {
		return nil
	}
	return js.arts.ImportEngines(ctx, caller(ctx), engines...)
}

func (js *jobService) SubmitPerft(ctx context.Context, req *arbiterv1.SubmitPerftRequest) (*arbiterv1.SubmitPerftResponse, error) {
	if req.GetSpec() == nil {
		return nil, apierr.Invalid("spec missing")
	}
	ref, err := js.core.Create(ctx, caller(ctx), jobkind.Perft, req.GetSpec())
	if err != nil {
		return nil, err
	}
	j, err := js.snapshot(ref.ID, true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.SubmitPerftResponse{Job: j}, nil
}

func (js *jobService) SubmitMatch(ctx context.Context, req *arbiterv1.SubmitMatchRequest) (*arbiterv1.SubmitMatchResponse, error) {
	if req.GetSpec() == nil {
		return nil, apierr.Invalid("spec missing")
	}
	if err := js.importGit(ctx, req.GetSpec().GetEngineA(), req.GetSpec().GetEngineB()); err != nil {
		return nil, err
	}
	ref, err := js.core.Create(ctx, caller(ctx), testview.Kind, req.GetSpec())
	if err != nil {
		return nil, err
	}
	j, err := js.snapshot(ref.ID, true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.SubmitMatchResponse{Job: j}, nil
}

func (js *jobService) SubmitSpsa(ctx context.Context, req *arbiterv1.SubmitSpsaRequest) (*arbiterv1.SubmitSpsaResponse, error) {
	if req.GetSpec() == nil {
		return nil, apierr.Invalid("spec missing")
	}
	if err := js.importGit(ctx, req.GetSpec().GetEngine()); err != nil {
		return nil, err
	}
	ref, err := js.core.Create(ctx, caller(ctx), jobkind.SPSA, req.GetSpec())
	if err != nil {
		return nil, err
	}
	j, err := js.snapshot(ref.ID, true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.SubmitSpsaResponse{Job: j}, nil
}

// SubmitJob creates a job of a kind that plugs in (package workload): the
// kind names it, and the spec must be that kind's message.
func (js *jobService) SubmitJob(ctx context.Context, req *arbiterv1.SubmitJobRequest) (*arbiterv1.SubmitJobResponse, error) {
	k, ok := workload.Lookup(req.GetKind())
	if !ok || k.Spec == nil || js.workloads[req.GetKind()] == nil {
		return nil, apierr.Invalid("kind: %s is not a kind of job this coordinator runs (%s)", apierr.Q(req.GetKind()),
			strings.Join(js.submittable(), ", "))
	}
	if req.GetSpec() == nil {
		return nil, apierr.Invalid("spec missing")
	}
	spec := k.Spec()
	if err := req.GetSpec().UnmarshalTo(spec); err != nil {
		return nil, apierr.Invalid("spec: a %s job needs a %s: %v", k.Name, spec.ProtoReflect().Descriptor().FullName(), err)
	}
	ref, err := js.core.Create(ctx, caller(ctx), k.Name, spec)
	if err != nil {
		return nil, err
	}
	j, err := js.snapshot(ref.ID, true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.SubmitJobResponse{Job: j}, nil
}

// submittable lists the kinds SubmitJob creates jobs of: those served
// that have a spec.
func (js *jobService) submittable() []string {
	var out []string
	for _, k := range workload.Kinds() {
		if k.Spec != nil && js.workloads[k.Name] != nil {
			out = append(out, k.Name)
		}
	}
	slices.Sort(out)
	return out
}

func (js *jobService) GetJob(ctx context.Context, req *arbiterv1.GetJobRequest) (*arbiterv1.GetJobResponse, error) {
	if err := mayRead(caller(ctx)); err != nil {
		return nil, err
	}
	j, err := js.snapshot(req.GetJobId(), true)
	if err != nil {
		return nil, err
	}
	if err := js.addArtifactChecks(ctx, j); err != nil {
		return nil, err
	}
	return &arbiterv1.GetJobResponse{Job: j}, nil
}

// MaxListJobs bounds one ListJobs page.
const MaxListJobs = 1000

func (js *jobService) ListJobs(ctx context.Context, req *arbiterv1.ListJobsRequest) (*arbiterv1.ListJobsResponse, error) {
	if err := mayRead(caller(ctx)); err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit == 0 {
		limit = 100
	}
	limit = min(limit, MaxListJobs)
	f := jobfind.Filter{Kind: req.GetKind(), State: req.GetState(), Submitter: req.GetSubmitter(), Engine: req.GetEngine(),
		Verdict: req.GetVerdict(), Tag: req.GetTag(), TimeControl: req.GetTimeControl(), Text: req.GetText()}
	if t := req.GetCreatedAfter(); t != nil {
		f.After = t.AsTime()
	}
	if t := req.GetCreatedBefore(); t != nil {
		f.Before = t.AsTime()
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	cursor, err := jobfind.ParseCursor(req.GetCursor())
	if err != nil {
		return nil, err
	}
	infos, next := jobfind.Page(js.core, &f, cursor, limit)
	resp := &arbiterv1.ListJobsResponse{NextCursor: next}
	for _, info := range infos {
		snap, err := js.core.Job(info.ID, false)
		if err != nil {
			continue // gone meanwhile
		}
		resp.Jobs = append(resp.Jobs, snap.(*arbiterv1.Job))
	}
	resp.Jobs = js.withBlocked(resp.Jobs...)
	return resp, nil
}

// watchInterval is the shortest time between two snapshots of a watch.
const watchInterval = 200 * time.Millisecond

func (js *jobService) WatchJob(req *arbiterv1.WatchJobRequest, stream arbiterv1.JobService_WatchJobServer) error {
	ctx := stream.Context()
	if err := mayRead(caller(ctx)); err != nil {
		return err
	}
	for {
		ch, err := js.core.Changed(req.GetJobId())
		if err != nil {
			return err
		}
		snap, err := js.snapshot(req.GetJobId(), true)
		if err != nil {
			return err
		}
		if err := stream.Send(&arbiterv1.WatchJobResponse{Job: snap}); err != nil {
			return err
		}
		if !jobproto.Unfinished(snap.State) {
			return nil
		}
		if err := js.core.Ready(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-time.After(5 * time.Second): // keep-alive snapshot
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(watchInterval):
		}
	}
}

func (js *jobService) CancelJob(ctx context.Context, req *arbiterv1.CancelJobRequest) (*arbiterv1.CancelJobResponse, error) {
	if err := js.core.Cancel(ctx, caller(ctx), req.GetJobId(), "cancelled by "+caller(ctx).Name); err != nil {
		return nil, err
	}
	j, err := js.snapshot(req.GetJobId(), true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.CancelJobResponse{Job: j}, nil
}

func (js *jobService) ModifyJob(ctx context.Context, req *arbiterv1.ModifyJobRequest) (*arbiterv1.ModifyJobResponse, error) {
	m := core.Modification{Priority: req.Priority, Share: req.Throughput, Games: req.Games, Notes: req.Notes,
		SetTags: req.GetSetTags(), Tags: req.GetTags()}
	if !m.SetTags && len(req.GetTags()) > 0 {
		return nil, apierr.Invalid("tags given without set_tags")
	}
	if err := js.core.Modify(ctx, caller(ctx), req.GetJobId(), m); err != nil {
		return nil, err
	}
	j, err := js.snapshot(req.GetJobId(), true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ModifyJobResponse{Job: j}, nil
}

func (js *jobService) ResumeJob(ctx context.Context, req *arbiterv1.ResumeJobRequest) (*arbiterv1.ResumeJobResponse, error) {
	if err := js.core.Resume(ctx, caller(ctx), req.GetJobId()); err != nil {
		return nil, err
	}
	j, err := js.snapshot(req.GetJobId(), true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ResumeJobResponse{Job: j}, nil
}

func (js *jobService) RescheduleJob(ctx context.Context, req *arbiterv1.RescheduleJobRequest) (*arbiterv1.RescheduleJobResponse, error) {
	if js.games == nil {
		return nil, noTests(req.GetJobId())
	}
	ref, err := js.games.Reschedule(ctx, js.core, caller(ctx), req.GetJobId())
	if err != nil {
		return nil, err
	}
	j, err := js.snapshot(ref.ID, true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.RescheduleJobResponse{Job: j}, nil
}

func (js *jobService) DownloadPGN(req *arbiterv1.DownloadPGNRequest, stream arbiterv1.JobService_DownloadPGNServer) error {
	ctx := stream.Context()
	if err := mayRead(caller(ctx)); err != nil {
		return err
	}
	var buf strings.Builder
	games := uint32(0)
	flush := func() error {
		if games == 0 {
			return nil
		}
		err := stream.Send(&arbiterv1.DownloadPGNResponse{Pgn: buf.String(), Games: games})
		buf.Reset()
		games = 0
		return err
	}
	pgns := func(_ context.Context, id string, _ func(string) error) error { return noTests(id) }
	if js.games != nil {
		pgns = js.games.PGNs // its answer names a job it does not have
	}
	for _, wl := range js.needers {
		if src, ok := wl.(pgnSource); ok && src.Has(req.GetJobId()) {
			pgns = src.PGNs
			break
		}
	}
	err := pgns(ctx, req.GetJobId(), func(p string) error {
		buf.WriteString(p)
		if !strings.HasSuffix(p, "\n\n") {
			buf.WriteString("\n")
		}
		games++
		if buf.Len() >= 256<<10 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
