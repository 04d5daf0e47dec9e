package jobreport

import (
	"context"
	"fmt"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/spec/spsaplan"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	"github.com/arbiter-chess/arbiter/spsa"
)

// RunTune submits an SPSA tune and prints its id; with wait it follows the
// tune to its end instead (a line on stderr per update), prints it as
// status does and, with pgnout, downloads its games there. A tune that
// ends other than done is a failure (exit status 1).
func RunTune(ctx context.Context, out, stderr io.Writer, c *clusterclient.Client, spec *arbiterv1.SpsaSpec, wait bool, pgnout string) error {
	return RunTuneThen(ctx, out, stderr, c, spec, wait, pgnout, nil)
}

// RunTuneThen is RunTune that, with wait, calls then with the tune's id
// once the tune is done (a verification of its values).
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
	sp := job.GetSpsaProgress()
	lim, _ := matchspec.LimitsFromProto(spec.GetTimeControl(), 1)
	fmt.Fprintf(stderr, "tune %s: %s, %d parameters, %d pairs in %d batches of %d, %s, %d openings\n", job.GetJobId(),
		spec.GetEngine().GetName(), len(spec.GetParams()), spec.GetPairs(), sp.GetBatchesTotal(), sp.GetBatchPairs(), lim.String(),
		len(spec.GetOpenings()))
	last := uint64(0)
	final, err := WaitTest(ctx, c, job.GetJobId(), stderr, func(j *arbiterv1.Job) {
		if p := j.GetSpsaProgress(); p.GetUpdates() != last {
			last = p.GetUpdates()
			fmt.Fprintln(stderr, progressLine(p))
		}
	})
	if err != nil {
		return err
	}
	PrintTune(out, final)
	if err := finishGames(ctx, c, stderr, final, pgnout, "tune"); err != nil {
		return err
	}
	if then != nil {
		return then(final.GetJobId())
	}
	return nil
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

// trajectoryColumns is how many parameters one trajectory table shows;
// more go to further tables.
const trajectoryColumns = 8

// PrintTune prints a tune: its spec and schedule, where it stands, every
// parameter (start, current θ and the value the engine is given, range,
// schedule, c_k and R_k of the next batch), the trajectory, the games and
// incidents by worker.
func PrintTune(out io.Writer, j *arbiterv1.Job) {
	spec, sp := j.GetSpsa(), j.GetSpsaProgress()
	fmt.Fprintf(out, "Tune:       %s (%s)\nState:      %s\n", j.GetJobId(), j.GetKind(), StateName(j.GetState()))
	lim, _ := matchspec.LimitsFromProto(spec.GetTimeControl(), 1)
	a, b := spsa.SideNames(spec.GetEngine().GetName())
	fmt.Fprintf(out, "Engine:     %s, played as %s (theta + c_k*delta) vs %s (theta - c_k*delta)\n", EngineDesc(spec.GetEngine()), a, b)
	if art := spec.GetEngine().GetArtifact(); art != nil {
		fmt.Fprintf(out, "Artifact:   %s\n", matchspec.ArtifactDesc(spec.GetEngine().GetName(), art))
	}
	fmt.Fprintf(out, "Limits:     %s (reference nps %d)\nOpenings:   %s, %d, order %s, seed %d\n", lim.String(), spec.GetReferenceNps(),
		spec.GetBookName(), spec.GetOpeningsCount(), orDefault(spec.GetBookOrder(), "sequential"), spec.GetSeed())
	fmt.Fprintf(out, "Design:     %d parameters, %d pairs in %d batches of %d; alpha %g, gamma %g, A %g (A ratio %g)\n",
		len(spec.GetParams()), spec.GetPairs(), sp.GetBatchesTotal(), sp.GetBatchPairs(), spec.GetAlpha(), spec.GetGamma(), sp.GetA(), spec.GetARatio())
	fmt.Fprintf(out, "Schedule:   priority %d, throughput %g; %d of %d updates applied (%d pairs), %d batches leased\n",
		spec.GetPriority(), spec.GetThroughput(), sp.GetUpdates(), sp.GetBatchesTotal(), sp.GetPairsDone(), sp.GetBatchesLeased())
	if j.GetError() != "" {
		fmt.Fprintf(out, "Error:      %s\n", j.GetError())
	}
	p := sp.GetPentanomial()
	fmt.Fprintf(out, "Games:      %d, %s: +%d =%d -%d, Ptnml(0-2) [%d, %d, %d, %d, %d] (PGNs stored: %d)\n", sp.GetGames(), a,
		sp.GetWins(), sp.GetDraws(), sp.GetLosses(), p.GetLl(), p.GetLd(), p.GetDd(), p.GetWd(), p.GetWw(), sp.GetPgns())
	fmt.Fprintln(out)
	printParamStates(out, sp.GetParams())
	printTrajectory(out, sp)
	printVerifications(out, sp.GetVerifications())
	if len(sp.GetWorkers()) > 0 {
		fmt.Fprintln(out)
		printWorkers(out, sp.GetWorkers())
	}
}

// printParamStates prints each parameter's row.
func printParamStates(out io.Writer, states []*arbiterv1.SpsaParamState) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARAM\tSTART\tCURRENT\tVALUE\tMIN\tMAX\tC_END\tR_END\tC_K\tR_K")
	for _, s := range states {
		par := spsa.Param{Name: s.GetName(), Float: s.GetIsFloat(), Min: s.GetMin(), Max: s.GetMax()}
		v := spsa.Rounded([]spsa.Param{par}, []float64{s.GetCurrent()})[0]
		fmt.Fprintf(tw, "%s\t%g\t%.3f\t%s\t%g\t%g\t%g\t%g\t%.3g\t%.3g\n", s.GetName(), s.GetStart(), s.GetCurrent(), par.OptionValue(v),
			s.GetMin(), s.GetMax(), s.GetCEnd(), s.GetREnd(), s.GetC(), s.GetR())
	}
	tw.Flush()
}

// printTrajectory prints θ at every trajectory point, a row per point,
// trajectoryColumns parameters per table.
func printTrajectory(out io.Writer, sp *arbiterv1.SpsaProgress) {
	points, states := sp.GetTrajectoryUpdates(), sp.GetParams()
	if len(points) == 0 || len(states) == 0 {
		return
	}
	every := "update"
	if sp.GetTrajectoryEvery() != 1 {
		every = fmt.Sprintf("%d updates", sp.GetTrajectoryEvery())
	}
	fmt.Fprintf(out, "\nTrajectory (theta at the start, every %s, and now):\n", every)
	for first := 0; first < len(states); first += trajectoryColumns {
		cols := states[first:min(first+trajectoryColumns, len(states))]
		if first > 0 {
			fmt.Fprintln(out)
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "UPDATES\t")
		for _, s := range cols {
			fmt.Fprintf(tw, "%s\t", s.GetName())
		}
		fmt.Fprintln(tw)
		for k, u := range points {
			fmt.Fprintf(tw, "%d\t", u)
			for _, s := range cols {
				if k < len(s.GetTrajectory()) {
					fmt.Fprintf(tw, "%.2f\t", s.GetTrajectory()[k])
				} else {
					fmt.Fprint(tw, "-\t")
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

// printVerifications prints the tests of the tune's values against its
// start values: the Elo of the tune as far as they have measured it.
func printVerifications(out io.Writer, vs []*arbiterv1.SpsaVerification) {
	if len(vs) == 0 {
		return
	}
	fmt.Fprintln(out, "\nVerification (the tune's values against its start values, Elo +/- 95 % interval):")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEST\tKIND\tSTATE\tAT UPDATE\tGAMES\tW\tD\tL\tELO\tSPRT")
	for _, v := range vs {
		p := v.GetProgress()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", v.GetJobId(), v.GetKind(), StateName(v.GetState()), v.GetUpdates(),
			p.GetGames(), p.GetWins(), p.GetDraws(), p.GetLosses(), VerifyElo(p), verifySPRT(p))
	}
	tw.Flush()
}

// VerifyElo is a test's Elo with the half-width of its 95 % interval, as
// the test's own report prints them ("12.30 +/- 4.50"; "-" before the first
// game).
func VerifyElo(p *arbiterv1.MatchProgress) string {
	if p.GetGames() == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f +/- %.2f", p.GetElo(), (p.GetEloCiHigh()-p.GetEloCiLow())/2)
}

func verifySPRT(p *arbiterv1.MatchProgress) string {
	if p.GetSprtState() == "" {
		return "-"
	}
	return fmt.Sprintf("%s, LLR %.2f (%.2f, %.2f)", p.GetSprtState(), p.GetLlr(), p.GetLowerBound(), p.GetUpperBound())
}

// printWorkers prints games and incidents by worker.
func printWorkers(out io.Writer, workers []*arbiterv1.WorkerIncidents) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tNAME\tNPS\tTC×\tGAMES\tTIME LOSSES\tCRASHES\tILLEGAL\tDISCONNECTS\tOTHER\tRESIDUAL\tSTATUS")
	for _, w := range workers {
		st := "ok"
		if w.GetExcluded() {
			st = "excluded: " + w.GetReason()
		}
		res := "-"
		if w.GetHasResidual() {
			res = fmt.Sprintf("%.2f", w.GetResidual())
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", w.GetWorkerId(), w.GetName(), w.GetBenchNps(), w.GetTimeScale(),
			w.GetGames(), w.GetTimeLosses(), w.GetCrashes(), w.GetIllegalMoves(), w.GetDisconnects(), w.GetOther(), res, st)
	}
	tw.Flush()
}

// ExportTune prints a tune's current values in format f (spsa.Export):
// Fishtest's or OpenBench's parameter lines, setoption commands, an
// engine spec's option.X=V list, or rows of our engine's tables.
func ExportTune(ctx context.Context, out io.Writer, c *clusterclient.Client, id string, f spsa.Format) error {
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
	s, err := spsa.Export(f, ps, theta)
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
	return RunTest(ctx, out, stderr, c, spec, plan, wait, pgnout)
}

// sortedOptions is an engine's options as "k=v" in name order.
func sortedOptions(opts map[string]string) []string {
	out := make([]string, 0, len(opts))
	for k, v := range opts {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// The tune family's report: SPSA tunes (their kind registers with
// jobkind from kinds/spsa).
func init() {
	RegisterReport(jobkind.FamilyTune, Report{Order: 20, Header: "TUNE\tSTATE\tENGINE\tTC\tUPDATES\tPAIRS\tGAMES\tPARAMS", Row: tuneListRow, Detail: PrintTune,
		JSON: func(o *JobJSON, j *arbiterv1.Job) {
			o.Tune = newTuneJob(j)
			o.Workers = NewWorkers(j.GetSpsaProgress().GetWorkers())
		}})
}
