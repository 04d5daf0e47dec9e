package netloop

// The farm runner: with Runner.Farm set, a generation's datagen is a
// DATAGEN job of the coordinator (played with the best net, uploaded),
// pulled into the step's data file; its SPRT is a cluster SPRT test of
// the new net against the best (both uploaded); its ship also makes the
// new net the default of the engine's name on the coordinator (`net
// default`). Training stays on this machine. A job's id is written in
// its step's directory (DIR/steps/KEY/job) as soon as the coordinator
// answers, so a loop stopped while the job runs re-attaches to it when it
// is run again instead of submitting another.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/filehash"
	"github.com/arbiter-chess/arbiter/client/artifactclient"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/datagenclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/sprt"
)

// jobFile is where step key keeps the id of its farm job.
func (r *Runner) jobFile(key string) string { return filepath.Join(r.Dir.StepDir(key), "job") }

// attach returns the step's farm job: the one its directory names, or
// one submit makes (its id written at once).
func (r *Runner) attach(s *Step, submit func() (string, error)) (string, error) {
	if b, err := os.ReadFile(r.jobFile(s.Key)); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			fmt.Fprintf(r.Out, "net loop: generation %d: %s: re-attached to job %s\n", s.Gen, s.Kind, id)
			return id, nil
		}
	}
	id, err := submit()
	if err != nil {
		return "", err
	}
	if err := writeAtomic(r.jobFile(s.Key), []byte(id+"\n")); err != nil {
		return "", err
	}
	fmt.Fprintf(r.Out, "net loop: generation %d: %s: submitted job %s\n", s.Gen, s.Kind, id)
	return id, nil
}

// waitJob follows job id to its end. A job that ended other than done,
// or that the coordinator does not know, is forgotten by the step (the
// next run submits it again) and is an error naming it.
func (r *Runner) waitJob(ctx context.Context, s *Step, id string, progress func(*arbiterv1.Job)) (*arbiterv1.Job, error) {
	final, err := r.Farm.WatchJob(ctx, id, clusterclient.Interactive, progress)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if status.Code(errors.Unwrap(err)) == codes.NotFound || status.Code(err) == codes.NotFound {
		os.Remove(r.jobFile(s.Key))
		return nil, fmt.Errorf("job %s: not on the coordinator (forgotten; the next run submits the step again)", id)
	}
	if err != nil {
		return nil, cliexit.Call(r.Farm, "watch "+id, err)
	}
	if final.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		os.Remove(r.jobFile(s.Key))
		return nil, fmt.Errorf("job %s ended %s: %s (the next run submits the step again)", id, jobreport.StateName(final.GetState()), final.GetError())
	}
	return final, nil
}

// every returns a progress function that prints line(j) at most every
// 5 seconds.
func (r *Runner) every(line func(*arbiterv1.Job) string) func(*arbiterv1.Job) {
	last := time.Time{}
	return func(j *arbiterv1.Job) {
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			if l := line(j); l != "" {
				fmt.Fprintln(r.Out, l)
			}
		}
	}
}

// farmDatagen is the datagen step on the farm: a DATAGEN job of the
// step's positions and seed with the best net, pulled in text format.
func (r *Runner) farmDatagen(ctx context.Context, s *Step, res *Result) error {
	es, err := r.engineSpec(fmt.Sprintf("gen%d", s.Gen-1), s.Best)
	if err != nil {
		return err
	}
	ds, err := datagenclient.Get()
	if err != nil {
		return err
	}
	id, err := r.attach(s, func() (string, error) {
		return ds.Submit(ctx, r.Farm, es.String(), r.Settings.Each, r.Settings.Positions, s.Seed, r.Out)
	})
	if err != nil {
		return err
	}
	final, err := r.waitJob(ctx, s, id, r.every(func(j *arbiterv1.Job) string {
		d := ds.Of(j)
		return fmt.Sprintf("net loop: generation %d: job %s: %d/%d positions", s.Gen, id, d.GetProgress().GetPositions(), d.GetSpec().GetPositions())
	}))
	if err != nil {
		return err
	}
	out := r.Dir.DataPath(s.Key)
	os.Remove(out)
	os.Remove(out + ".pull")
	if err := ds.PullText(ctx, r.Farm, id, out); err != nil {
		return fmt.Errorf("pull of job %s: %w", id, err)
	}
	if res.DataSHA, err = filehash.SHA256(out); err != nil {
		return err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	p := ds.Of(final).GetProgress()
	res.Positions, res.Games, res.Bytes = int(p.GetPositions()), int(p.GetGames()), fi.Size()
	fmt.Fprintf(r.Out, "net loop: generation %d: data %d positions from %d games (job %s), sha256 %s\n", s.Gen, res.Positions, res.Games, id, res.DataSHA[:12])
	return nil
}

// farmSPRT is the SPRT step on the farm: a cluster SPRT test of the new
// net (engine A) against the best, both nets uploaded, capped at
// --games-cap.
func (r *Runner) farmSPRT(ctx context.Context, s *Step, res *Result) error {
	nw, best, err := r.sprtEngines(s)
	if err != nil {
		return err
	}
	id, err := r.attach(s, func() (string, error) {
		tf := matchplan.TestFlags{Match: matchplan.Flags{Engines: []string{nw.String(), best.String()}, Each: r.Settings.Each,
			Openings: r.openings, Games: r.Settings.GamesCap, SPRT: r.Settings.SPRT, HangTimeout: 30000}}
		spec, plan, err := tf.Spec(true)
		if err != nil {
			return "", err
		}
		if err := artifactclient.UploadEngines(ctx, r.Farm.Conn(), plan.Travel, spec, r.Out); err != nil {
			return "", cliexit.Call(r.Farm, "upload", err)
		}
		resp, err := r.Farm.Jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: spec})
		if err != nil {
			return "", cliexit.Call(r.Farm, "submit", err)
		}
		return resp.GetJob().GetJobId(), nil
	})
	if err != nil {
		return err
	}
	final, err := r.waitJob(ctx, s, id, r.every(func(j *arbiterv1.Job) string {
		mp := j.GetMatchProgress()
		return fmt.Sprintf("net loop: generation %d: job %s: games %d: +%d =%d -%d, LLR %.2f", s.Gen, id, mp.GetGames(), mp.GetWins(), mp.GetDraws(), mp.GetLosses(), mp.GetLlr())
	}))
	if err != nil {
		return err
	}
	mp := final.GetMatchProgress()
	pt := mp.GetPentanomial()
	res.SPRT = newSPRTResult(int64(mp.GetWins()), int64(mp.GetDraws()), int64(mp.GetLosses()),
		[5]int64{int64(pt.GetLl()), int64(pt.GetLd()), int64(pt.GetDd()), int64(pt.GetWd()), int64(pt.GetWw())},
		mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound(), sprt.State(mp.GetSprtState()))
	fmt.Fprintf(r.Out, "net loop: generation %d: SPRT (job %s) %s\n", s.Gen, id, sprtLine(res))
	return nil
}

// farmShip makes the shipped net the default net of the engine's name on
// the coordinator (`arbiter net default NAME SHA`), uploading it first
// (stored once: a net the SPRT uploaded is not sent again).
func (r *Runner) farmShip(ctx context.Context, s *Step) error {
	es, err := enginespec.Parse(r.Settings.Engine, enginespec.Match)
	if err != nil {
		return fmt.Errorf("--engine: %v", err)
	}
	p, err := artifactclient.PackNet(r.Dir.NetPath(s.New), "", es.Name)
	if err != nil {
		return err
	}
	a, err := artifactclient.Upload(ctx, r.Farm.Conn(), p, io.Discard)
	p.Close()
	if err != nil {
		return cliexit.Call(r.Farm, "net upload", err)
	}
	if a.GetSha256() != s.New.SHA {
		return fmt.Errorf("net %s: the coordinator stored it as %s", s.New.SHA[:12], a.GetSha256())
	}
	_, err = arbiterv1.NewArtifactServiceClient(r.Farm.Conn()).SetDefaultNet(ctx, &arbiterv1.SetDefaultNetRequest{Engine: es.Name, Sha256: s.New.SHA})
	if err != nil {
		return cliexit.Call(r.Farm, "net default", err)
	}
	fmt.Fprintf(r.Out, "net loop: generation %d: net %s is the default net of %s on the coordinator\n", s.Gen, s.New.SHA[:12], es.Name)
	return nil
}
