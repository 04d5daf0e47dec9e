package spsa

// A tune on a coordinator as its commands follow it: submitted (and
// followed to its end with --wait), its values exported, and a test of
// its values against its start values (spsa confirm) submitted.

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/spec/spsaplan"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	sp "github.com/arbiter-chess/arbiter/spsa"
)

// RunTuneThen submits an SPSA tune and prints its id; with wait it
// follows the tune to its end instead (a line on stderr per update),
// prints it as status does and, with pgnout, downloads its games there,
// then calls then (when not nil) with the tune's id (a verification of
// its values). A tune that ends other than done is a failure (exit
// status 1).
func RunTuneThen(ctx context.Context, out, stderr io.Writer, c *clusterclient.Client, spec *arbiterv1.SpsaSpec, wait bool, pgnout string,
	then func(tuneID string) error) error {
	resp, err := c.Jobs.SubmitSpsa(ctx, &arbiterv1.SubmitSpsaRequest{Spec: spec})
	if err != nil {
		return cliexit.Call(c, "submit", err)
	}
	job := resp.GetJob()
	if !wait {
		fmt.Fprintln(out, job.GetJobId())
		return nil
	}
	prog := job.GetSpsaProgress()
	lim, _ := matchspec.LimitsFromProto(spec.GetTimeControl(), 1)
	fmt.Fprintf(stderr, "tune %s: %s, %d parameters, %d pairs in %d batches of %d, %s, %d openings\n", job.GetJobId(),
		spec.GetEngine().GetName(), len(spec.GetParams()), spec.GetPairs(), prog.GetBatchesTotal(), prog.GetBatchPairs(), lim.String(),
		len(spec.GetOpenings()))
	final, err := followTune(ctx, c, job.GetJobId(), stderr)
	if err != nil {
		return err
	}
	PrintTune(out, final)
	if err := jobreport.FinishGames(ctx, c, stderr, final, pgnout, "tune"); err != nil {
		return err
	}
	if then != nil {
		return then(final.GetJobId())
	}
	return nil
}

// followTune follows the tune id to its end (through coordinator
// restarts), with a line on stderr at each update.
func followTune(ctx context.Context, c *clusterclient.Client, id string, stderr io.Writer) (*arbiterv1.Job, error) {
	last := uint64(0)
	return jobreport.WaitTest(ctx, c, id, stderr, func(j *arbiterv1.Job) {
		if p := j.GetSpsaProgress(); p.GetUpdates() != last {
			last = p.GetUpdates()
			fmt.Fprintln(stderr, progressLine(p))
		}
	})
}

// waitTune is `status TUNE --wait`: the tune followed to its end as
// submit spsa --wait follows it, then printed (as JSON with --json); a
// tune that ends other than done is exit status 1.
func waitTune(ctx context.Context, c *clusterclient.Client, j *arbiterv1.Job, o jobreport.WaitOptions) (*arbiterv1.Job, error) {
	final, err := followTune(ctx, c, j.GetJobId(), o.Progress)
	if err != nil {
		return nil, err
	}
	if err := o.Print(final, PrintTune); err != nil {
		return nil, err
	}
	return final, jobreport.FinishGames(ctx, c, o.Progress, final, "", "tune")
}

// maxLineParams is how many parameters a progress line shows.
const maxLineParams = 6

func progressLine(p *arbiterv1.SpsaProgress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "updates %d/%d, games %d: +%d =%d -%d", p.GetUpdates(), p.GetBatchesTotal(), p.GetGames(), p.GetWins(), p.GetDraws(), p.GetLosses())
	for i, ps := range p.GetParams() {
		if i == maxLineParams {
			fmt.Fprintf(&b, " (+%d more)", len(p.GetParams())-i)
			break
		}
		fmt.Fprintf(&b, "  %s %.2f", ps.GetName(), ps.GetCurrent())
	}
	return b.String()
}

// ExportTune prints a tune's current values in format f (spsa.Export):
// Fishtest's or OpenBench's parameter lines, setoption commands, an
// engine spec's option.X=V list, or rows of our engine's tables.
func ExportTune(ctx context.Context, out io.Writer, c *clusterclient.Client, id string, f sp.Format) error {
	var resp *arbiterv1.GetJobResponse
	err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
		resp, err = c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: id})
		return err
	})
	if err != nil {
		return cliexit.Call(c, "spsa export", err)
	}
	ps, theta, err := spsaspec.Current(resp.GetJob())
	if err != nil {
		return cliexit.Usage("%v", err)
	}
	s, err := sp.Export(f, ps, theta)
	if err != nil {
		return cliexit.Usage("%v", err)
	}
	_, err = io.WriteString(out, s)
	return err
}

// VerifyTune submits the test of tune id's values now against its start
// values (spsaplan.VerifySpec) and follows it as RunTest does.
func VerifyTune(ctx context.Context, out, stderr io.Writer, c *clusterclient.Client, id string, f matchplan.TestFlags, wait bool, pgnout string) error {
	var resp *arbiterv1.GetJobResponse
	err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
		resp, err = c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: id})
		return err
	})
	if err != nil {
		return cliexit.Call(c, "spsa confirm", err)
	}
	spec, plan, err := spsaplan.VerifySpec(resp.GetJob(), f)
	if err != nil {
		return cliexit.Usage("%v", err)
	}
	tune := resp.GetJob()
	if tune.GetState() == arbiterv1.JobState_JOB_STATE_RUNNING {
		fmt.Fprintf(stderr, "arbiter: tune %s is still running: the test plays its values after %d of %d updates\n", id,
			tune.GetSpsaProgress().GetUpdates(), tune.GetSpsaProgress().GetBatchesTotal())
	}
	return jobreport.RunTest(ctx, out, stderr, c, spec, plan, wait, pgnout)
}
