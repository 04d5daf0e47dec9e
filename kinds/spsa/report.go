package spsa

// What `arbiter status` shows of SPSA tunes (family tune): a row of the
// list, second of its tables (Order 20), the detail of one tune
// (PrintTune, which `submit spsa --wait` prints too), `status TUNE
// --wait` (waitTune, follow.go), and the typed `tune`
// object of --json with its workers, which stays for a release
// (jobreport.JobJSON.Tune, filled in here with the builders jobreport
// exports; the kind sets no `detail` object, so the JSON is what it was).

import (
	_ "embed"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	sp "github.com/arbiter-chess/arbiter/spsa"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

func init() {
	jobreport.RegisterReport(jobkind.FamilyTune, jobreport.Report{Order: 20, Header: "TUNE\tSTATE\tENGINE\tTC\tUPDATES\tPAIRS\tGAMES\tPARAMS",
		Row: listRow, Detail: PrintTune, Wait: waitTune,
		JSON: func(o *jobreport.JobJSON, j *arbiterv1.Job) {
			o.Tune, _ = o.Detail.(*jobreport.TuneJob)
			o.Workers = jobreport.NewWorkers(j.GetSpsaProgress().GetWorkers())
		},
		DetailJSON:   func(j *arbiterv1.Job) any { return newTuneJSON(j) },
		DetailSchema: detailSchema})
}

// detailSchema is the schema of the job's detail object: the typed tune
// object's, which the detail repeats (the typed one stays for a release:
// clients of the release before read it there).
//
//go:embed detail.schema.json
var detailSchema []byte

// listRow is a tune's row of `arbiter status`'s list.
func listRow(j *arbiterv1.Job) string {
	s, prog := j.GetSpsa(), j.GetSpsaProgress()
	lim, _ := matchspec.LimitsFromProto(s.GetTimeControl(), 1)
	names := make([]string, 0, len(prog.GetParams()))
	for _, p := range prog.GetParams() {
		names = append(names, p.GetName())
	}
	params := strings.Join(names, ",")
	if len(params) > 60 {
		params = fmt.Sprintf("%s... (%d parameters)", params[:50], len(names))
	}
	updates := fmt.Sprint(prog.GetUpdates())
	if prog.GetBatchesTotal() > 0 {
		updates += fmt.Sprintf("/%d", prog.GetBatchesTotal())
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d/%d\t%d\t%s", j.GetJobId(), jobreport.ListState(j), s.GetEngine().GetName(), lim.String(),
		updates, prog.GetPairsDone(), s.GetPairs(), prog.GetGames(), params)
}

// newTuneJSON is a tune's typed `tune` object of --json (JobJSON.Tune).
func newTuneJSON(j *arbiterv1.Job) *jobreport.TuneJob {
	s, prog := j.GetSpsa(), j.GetSpsaProgress()
	lim, _ := matchspec.LimitsFromProto(s.GetTimeControl(), 1)
	o := &jobreport.TuneJob{Engine: jobreport.NewEngineJSON(s.GetEngine()), TC: lim.String(), Pairs: s.GetPairs(), PairsDone: prog.GetPairsDone(),
		Updates: prog.GetUpdates(), Games: prog.GetGames(), Wins: prog.GetWins(), Draws: prog.GetDraws(), Losses: prog.GetLosses(),
		Pentanomial: jobreport.Penta(prog.GetPentanomial()), Params: []jobreport.TuneParam{}}
	for _, p := range prog.GetParams() {
		o.Params = append(o.Params, jobreport.TuneParam{Name: p.GetName(), Start: p.GetStart(), Current: p.GetCurrent(), Min: p.GetMin(), Max: p.GetMax()})
	}
	for _, v := range prog.GetVerifications() {
		mp := v.GetProgress()
		tv := jobreport.TuneVerification{JobID: v.GetJobId(), Kind: v.GetKind(), State: jobreport.StateName(v.GetState()), Updates: v.GetUpdates(),
			Games: mp.GetGames(), Wins: mp.GetWins(), Draws: mp.GetDraws(), Losses: mp.GetLosses(), SPRTState: mp.GetSprtState()}
		if mp.GetGames() > 0 {
			tv.Elo, tv.EloCI95 = jobreport.Finite(mp.GetElo()), [2]*float64{jobreport.Finite(mp.GetEloCiLow()), jobreport.Finite(mp.GetEloCiHigh())}
		}
		o.Verifications = append(o.Verifications, tv)
	}
	return o
}

// trajectoryColumns is how many parameters one trajectory table shows;
// more go to further tables.
const trajectoryColumns = 8

// PrintTune prints a tune: its spec and schedule, where it stands, every
// parameter (start, current θ and the value the engine is given, range,
// schedule, c_k and R_k of the next batch), the trajectory, the games and
// incidents by worker.
func PrintTune(out io.Writer, j *arbiterv1.Job) {
	spec, prog := j.GetSpsa(), j.GetSpsaProgress()
	fmt.Fprintf(out, "Tune:       %s (%s)\nState:      %s\n", j.GetJobId(), j.GetKind(), jobreport.StateName(j.GetState()))
	lim, _ := matchspec.LimitsFromProto(spec.GetTimeControl(), 1)
	a, b := sp.SideNames(spec.GetEngine().GetName())
	fmt.Fprintf(out, "Engine:     %s, played as %s (theta + c_k*delta) vs %s (theta - c_k*delta)\n", jobreport.EngineDesc(spec.GetEngine()), a, b)
	if art := spec.GetEngine().GetArtifact(); art != nil {
		fmt.Fprintf(out, "Artifact:   %s\n", matchspec.ArtifactDesc(spec.GetEngine().GetName(), art))
	}
	fmt.Fprintf(out, "Limits:     %s (reference nps %d)\nOpenings:   %s, %d, order %s, seed %d\n", lim.String(), spec.GetReferenceNps(),
		spec.GetBookName(), spec.GetOpeningsCount(), bookOrder(spec), spec.GetSeed())
	fmt.Fprintf(out, "Design:     %d parameters, %d pairs in %d batches of %d; alpha %g, gamma %g, A %g (A ratio %g)\n",
		len(spec.GetParams()), spec.GetPairs(), prog.GetBatchesTotal(), prog.GetBatchPairs(), spec.GetAlpha(), spec.GetGamma(), prog.GetA(), spec.GetARatio())
	fmt.Fprintf(out, "Schedule:   priority %d, throughput %g; %d of %d updates applied (%d pairs), %d batches leased\n",
		spec.GetPriority(), spec.GetThroughput(), prog.GetUpdates(), prog.GetBatchesTotal(), prog.GetPairsDone(), prog.GetBatchesLeased())
	if j.GetError() != "" {
		fmt.Fprintf(out, "Error:      %s\n", j.GetError())
	}
	p := prog.GetPentanomial()
	fmt.Fprintf(out, "Games:      %d, %s: +%d =%d -%d, Ptnml(0-2) [%d, %d, %d, %d, %d] (PGNs stored: %d)\n", prog.GetGames(), a,
		prog.GetWins(), prog.GetDraws(), prog.GetLosses(), p.GetLl(), p.GetLd(), p.GetDd(), p.GetWd(), p.GetWw(), prog.GetPgns())
	fmt.Fprintln(out)
	printParamStates(out, prog.GetParams())
	printTrajectory(out, prog)
	printVerifications(out, prog.GetVerifications())
	if len(prog.GetWorkers()) > 0 {
		fmt.Fprintln(out)
		jobreport.PrintWorkers(out, prog.GetWorkers())
	}
}

// printParamStates prints each parameter's row.
func printParamStates(out io.Writer, states []*arbiterv1.SpsaParamState) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARAM\tSTART\tCURRENT\tVALUE\tMIN\tMAX\tC_END\tR_END\tC_K\tR_K")
	for _, s := range states {
		par := sp.Param{Name: s.GetName(), Float: s.GetIsFloat(), Min: s.GetMin(), Max: s.GetMax()}
		v := sp.Rounded([]sp.Param{par}, []float64{s.GetCurrent()})[0]
		fmt.Fprintf(tw, "%s\t%g\t%.3f\t%s\t%g\t%g\t%g\t%g\t%.3g\t%.3g\n", s.GetName(), s.GetStart(), s.GetCurrent(), par.OptionValue(v),
			s.GetMin(), s.GetMax(), s.GetCEnd(), s.GetREnd(), s.GetC(), s.GetR())
	}
	tw.Flush()
}

// printTrajectory prints θ at every trajectory point, a row per point,
// trajectoryColumns parameters per table.
func printTrajectory(out io.Writer, prog *arbiterv1.SpsaProgress) {
	points, states := prog.GetTrajectoryUpdates(), prog.GetParams()
	if len(points) == 0 || len(states) == 0 {
		return
	}
	every := "update"
	if prog.GetTrajectoryEvery() != 1 {
		every = fmt.Sprintf("%d updates", prog.GetTrajectoryEvery())
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", v.GetJobId(), v.GetKind(), jobreport.StateName(v.GetState()), v.GetUpdates(),
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

// bookOrder is a tune's book order as its detail names it.
func bookOrder(spec *arbiterv1.SpsaSpec) string {
	if o := spec.GetBookOrder(); o != "" {
		return o
	}
	return "sequential"
}
