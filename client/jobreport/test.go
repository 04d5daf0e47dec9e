package jobreport

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/client/artifactclient"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/sprt"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// RunTest submits a test and prints its id; with wait it follows the test
// to its end instead (a progress line on stderr per batch), prints the
// report and, with pgnout, downloads the games there. A test that ends
// other than done is a failure (exit status 1).
func RunTest(ctx context.Context, out, stderr io.Writer, c *clusterclient.Client, spec *arbiterv1.MatchSpec, plan *matchplan.Plan, wait bool, pgnout string) error {
	return RunTestWith(ctx, out, stderr, c, spec, plan, TestOutput{Wait: wait, PGNOut: pgnout})
}

// TestOutput is what RunTestWith does once the test is submitted.
type TestOutput struct {
	Wait   bool   // follow the test to its end and report it
	JSON   bool   // report it as status --json does (docs/json.md)
	PGNOut string // download its games to this file at the end
	// Pages is the base URL of the coordinator's web pages when known
	// (arbiter up's): the test's page is printed at its submission.
	Pages string
	// Resume follows a running test of the same spec instead of
	// submitting another: arbiter up on a kept data directory, run again
	// after it was stopped, goes on with the test it started.
	Resume bool
}

// RunTestWith is RunTest with the report as o says.
func RunTestWith(ctx context.Context, out, stderr io.Writer, c *clusterclient.Client, spec *arbiterv1.MatchSpec, plan *matchplan.Plan, o TestOutput) error {
	wait, pgnout := o.Wait, o.PGNOut
	// Engines named by upload= or source= go to the coordinator first.
	if err := artifactclient.UploadEngines(ctx, c.Conn(), plan.Travel, spec, stderr); err != nil {
		return cliexit.Call(c, "upload", err)
	}
	job, resumed, err := submitOrResume(ctx, c, spec, o.Resume)
	if err != nil {
		return err
	}
	if resumed {
		fmt.Fprintf(stderr, "test %s: resuming, %d games played\n", job.GetJobId(), job.GetMatchProgress().GetGames())
	}
	if o.Pages != "" {
		fmt.Fprintf(stderr, "test %s: page %s/tests/%s\n", job.GetJobId(), strings.TrimRight(o.Pages, "/"), job.GetJobId())
	}
	if !wait {
		fmt.Fprintln(out, job.GetJobId())
		return nil
	}
	fmt.Fprintf(stderr, "test %s: %s vs %s, %s, %d openings, %d pairs per batch\n", job.GetJobId(),
		spec.GetEngineA().GetName(), spec.GetEngineB().GetName(), plan.Limits(), len(spec.GetOpenings()),
		job.GetMatchProgress().GetBatchPairs())
	final, err := FollowTest(ctx, c, job.GetJobId(), stderr)
	if err != nil {
		return err
	}
	if len(artifactclient.Uploaded(spec)) > 0 {
		// A watch carries no artifact checks; the test's full record does.
		if resp, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: final.GetJobId()}); err == nil {
			final = resp.GetJob()
		}
	}
	if o.JSON {
		if err := WriteJob(out, final); err != nil {
			return err
		}
	} else {
		PrintTest(out, final)
	}
	return FinishGames(ctx, c, stderr, final, pgnout, "test")
}

// FinishGames ends a followed test or tune: its games downloaded to
// pgnout (when given), and a failure unless it is done.
func FinishGames(ctx context.Context, c *clusterclient.Client, stderr io.Writer, final *arbiterv1.Job, pgnout, what string) error {
	if pgnout != "" {
		n, err := DownloadPGN(ctx, c, final.GetJobId(), pgnout)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d games to %s\n", n, pgnout)
	}
	if final.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		return cliexit.Failure("%s %s %s: %s", what, final.GetJobId(), StateName(final.GetState()), final.GetError())
	}
	return nil
}

// FollowTest follows the test id to its end as submit sprt|match --wait
// does: a line on stderr each time its games change (with the LLR of an
// SPRT), and why it cannot progress when it cannot.
func FollowTest(ctx context.Context, c *clusterclient.Client, id string, stderr io.Writer) (*arbiterv1.Job, error) {
	lastGames := uint64(0)
	blocked := NewBlockedNotice(stderr)
	return WaitTest(ctx, c, id, stderr, func(j *arbiterv1.Job) {
		mp := j.GetMatchProgress()
		if mp.GetGames() != lastGames {
			lastGames = mp.GetGames()
			line := fmt.Sprintf("games %d: +%d =%d -%d", mp.GetGames(), mp.GetWins(), mp.GetDraws(), mp.GetLosses())
			if mp.GetSprtState() != "" {
				line += fmt.Sprintf(", LLR %.2f (%.2f, %.2f)", mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound())
			}
			fmt.Fprintln(stderr, line)
		}
		blocked.Update(j)
	})
}

// WaitTest follows a test to its end through the reconnecting watch
// (coordinator restarts included), saying so on stderr when it reconnects.
func WaitTest(ctx context.Context, c *clusterclient.Client, id string, stderr io.Writer, progress func(*arbiterv1.Job)) (*arbiterv1.Job, error) {
	final, err := c.WatchJob(ctx, id, WatchPolicy(c, stderr), progress)
	if ctx.Err() != nil {
		return nil, cliexit.Failure("interrupted while waiting for test %s (it keeps running)", id)
	}
	if err != nil {
		return nil, cliexit.Call(c, "watch "+id, err)
	}
	return final, nil
}

// testLimits describes a test's time controls (matchspec.DescribeLimits).
func testLimits(spec *arbiterv1.MatchSpec) string {
	return matchspec.DescribeLimits(spec.GetTimeControl(), spec.GetEngineA(), spec.GetEngineB())
}

// StoppedByHandNote marks an SPRT a person stopped before a bound
// wherever its result is shown: the SPRT's error rates (alpha, beta) hold
// only for a test that runs to a bound.
const StoppedByHandNote = "SPRT stopped by hand: its error rates no longer hold"

// PrintTest prints a test: spec, fastchess-style report (via
// sprt.FormatReport), the coordinator's SPRT state, incidents by worker.
func PrintTest(out io.Writer, j *arbiterv1.Job) {
	spec, mp := j.GetMatch(), j.GetMatchProgress()
	state := StateName(j.GetState())
	if capReached(j) {
		state += fmt.Sprintf(" (cap of %d games reached without an SPRT decision)", spec.GetGames())
	}
	if mp.GetStoppedByHand() {
		state += " (" + StoppedByHandNote + ")"
	}
	fmt.Fprintf(out, "Test:       %s (%s)\nState:      %s\n", j.GetJobId(), j.GetKind(), state)
	if tags := spec.GetTags(); len(tags) > 0 {
		fmt.Fprintf(out, "Tags:       %s\n", strings.Join(tags, ", "))
	}
	if n := spec.GetNotes(); n != "" {
		fmt.Fprintf(out, "Notes:      %s\n", strings.ReplaceAll(n, "\n", "\n            "))
	}
	if from := spec.GetRescheduledFrom(); from != "" {
		fmt.Fprintf(out, "Copy of:    %s\n", from)
	}
	if as := mp.GetRescheduledAs(); len(as) > 0 {
		fmt.Fprintf(out, "Copied as:  %s\n", strings.Join(as, ", "))
	}
	lim := testLimits(spec)
	fmt.Fprintf(out, "Engines:    %s vs %s\n", EngineDesc(spec.GetEngineA()), EngineDesc(spec.GetEngineB()))
	for _, e := range []*arbiterv1.EngineSpec{spec.GetEngineA(), spec.GetEngineB()} {
		if a := e.GetArtifact(); a != nil {
			fmt.Fprintf(out, "Artifact:   %s\n", matchspec.ArtifactDesc(e.GetName(), a))
		}
		if n := e.GetNet(); n != nil {
			fmt.Fprintf(out, "Net:        %s %s\n", e.GetName(), matchspec.NetDesc(n))
		}
	}
	fmt.Fprintf(out, "Limits:     %s (reference nps %d)\nOpenings:   %s, %d, order %s, seed %d\n", lim, spec.GetReferenceNps(),
		spec.GetBookName(), spec.GetOpeningsCount(), orDefault(spec.GetBookOrder(), "sequential"), spec.GetSeed())
	fmt.Fprintf(out, "Schedule:   priority %d, throughput %g, %d pairs per batch; %d batches done, %d leased\n",
		spec.GetPriority(), spec.GetThroughput(), mp.GetBatchPairs(), mp.GetBatchesDone(), mp.GetBatchesLeased())
	if j.GetError() != "" {
		fmt.Fprintf(out, "Error:      %s\n", j.GetError())
	}
	if b := j.GetProgress().GetBlocked(); b != "" {
		fmt.Fprintf(out, "Blocked:    %s\n", b)
	}
	p := mp.GetPentanomial()
	penta := sprt.Pentanomial{int64(p.GetLl()), int64(p.GetLd()), int64(p.GetDd()), int64(p.GetWd()), int64(p.GetWw())}
	rep := sprt.Report{First: spec.GetEngineA().GetName(), Second: spec.GetEngineB().GetName(),
		Details: lim + ", " + spec.GetBookName(),
		Results: sprt.Results{Wins: int64(mp.GetWins()), Draws: int64(mp.GetDraws()), Losses: int64(mp.GetLosses()), Pentanomial: &penta}}
	var params *sprt.Params
	if sp := spec.GetSprt(); j.GetKind() == jobkind.SPRT {
		m, _ := sprt.ParseModel(sp.GetModel())
		params = &sprt.Params{Elo0: sp.GetElo0(), Elo1: sp.GetElo1(), Alpha: sp.GetAlpha(), Beta: sp.GetBeta(), Model: m}
		rep.SPRT = params
	}
	if mp.GetGames() > 0 {
		fmt.Fprint(out, sprt.FormatReport(rep))
	} else {
		fmt.Fprintln(out, "No games counted yet.")
	}
	printStops(out, spec, mp)
	if params != nil {
		verdict := "no decision yet"
		if capReached(j) {
			verdict = "no decision: the game cap was reached"
		}
		switch mp.GetSprtState() {
		case string(sprt.Accepted):
			verdict = "H1 accepted"
		case string(sprt.Rejected):
			verdict = "H0 accepted (H1 rejected)"
		}
		if mp.GetStoppedByHand() {
			verdict = "no verdict: " + StoppedByHandNote
		}
		fmt.Fprintf(out, "SPRT:       LLR %.2f in (%.2f, %.2f) [%g, %g] %s: %s\n", mp.GetLlr(), mp.GetLowerBound(), mp.GetUpperBound(),
			params.Elo0, params.Elo1, params.Model, verdict)
	}
	fmt.Fprintf(out, "Games:      %d (PGNs stored: %d)\n", mp.GetGames(), mp.GetPgns())
	if len(mp.GetWorkers()) > 0 {
		PrintWorkers(out, mp.GetWorkers())
		for _, w := range mp.GetWorkers() {
			if n := w.GetLimitKills(); n > 0 {
				fmt.Fprintf(out, "Limits:     worker %s killed %d uploaded engine processes at its resource limits (incidents of kind LIMIT: the engine's fault, like a crash)\n", w.GetName(), n)
			}
		}
	}
	printArtifactChecks(out, j.GetArtifactChecks())
}

// printStops shows the anytime-valid interval beside the fixed-games
// Elo, the precision stop and the test's group of takes.
func printStops(out io.Writer, spec *arbiterv1.MatchSpec, mp *arbiterv1.MatchProgress) {
	if a := mp.GetAnytime(); a != nil {
		fmt.Fprintf(out, "Anytime:    Elo %.2f ± %.2f (95%%), anytime-valid [%.2f, %.2f] (%.4g%%); nElo anytime-valid [%.2f, %.2f]; holds however the test is stopped\n",
			mp.GetElo(), (mp.GetEloCiHigh()-mp.GetEloCiLow())/2, a.GetEloLow(), a.GetEloHigh(), 100*a.GetLevel(), a.GetNeloLow(), a.GetNeloHigh())
	}
	if w := spec.GetStopPrecisionElo(); w > 0 {
		state := "runs until the anytime interval is narrower"
		if mp.GetStoppedByPrecision() {
			state = "reached: the test stopped there"
		}
		fmt.Fprintf(out, "Stop:       precision=%g Elo (%s)\n", w, state)
	}
	if g := spec.GetGroup(); g != "" {
		takes := max(spec.GetGroupTakes(), 1)
		fmt.Fprintf(out, "Group:      %s, %d takes declared: each take's SPRT at alpha %.4g (the group's %.4g / %d)\n",
			g, takes, spec.GetSprt().GetAlpha()/float64(takes), spec.GetSprt().GetAlpha(), takes)
		for i, t := range mp.GetGroupTakes() {
			verdict := t.GetSprtState()
			if verdict == "" {
				verdict = "-"
			}
			fmt.Fprintf(out, "  take %d:   %s %s, SPRT %s, alpha %.4g, %d games\n", i+1, t.GetJobId(), t.GetState(), verdict, t.GetAlpha(), t.GetGames())
		}
	}
}

// printArtifactChecks shows what each worker did with the test's uploaded
// engines, with the end of the log of a refusal.
func printArtifactChecks(out io.Writer, checks []*arbiterv1.ArtifactCheck) {
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(out, "Uploaded engines and nets on the workers:")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tENGINE\tSTATE\tBENCH\tDETAIL")
	for _, c := range checks {
		bench := "-"
		if c.GetBench() != 0 {
			bench = fmt.Sprint(c.GetBench())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", orDefault(c.GetWorkerName(), c.GetWorkerId()), c.GetEngine(), matchspec.ArtifactCheckState(c.GetState()), bench, c.GetDetail())
	}
	tw.Flush()
	for _, c := range checks {
		if c.GetLog() == "" {
			continue
		}
		fmt.Fprintf(out, "Log of %s on %s (end):\n", c.GetEngine(), orDefault(c.GetWorkerName(), c.GetWorkerId()))
		lines := strings.Split(strings.TrimRight(c.GetLog(), "\n"), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		for _, l := range lines {
			fmt.Fprintf(out, "  | %s\n", l)
		}
	}
}

// EngineDesc is an engine as a detail view names it.
func EngineDesc(e *arbiterv1.EngineSpec) string {
	cmd := e.GetCommand()
	if a := e.GetArtifact(); a != nil {
		cmd = "uploaded " + a.GetSha256()[:min(12, len(a.GetSha256()))]
	}
	s := e.GetName() + " (" + cmd
	for _, kv := range sortedOptions(e.GetOptions()) {
		s += ", " + kv
	}
	return s + ")"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// DownloadPGN writes every game of a test or tune to the file path and returns
// the number of games.
func DownloadPGN(ctx context.Context, c *clusterclient.Client, id, path string) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, cliexit.Usage("%v", err)
	}
	n, err := StreamPGN(ctx, c, id, f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return n, err
}

// StreamPGN writes every game of a test or tune to w and returns their number.
func StreamPGN(ctx context.Context, c *clusterclient.Client, id string, w io.Writer) (int, error) {
	stream, err := c.Jobs.DownloadPGN(ctx, &arbiterv1.DownloadPGNRequest{JobId: id})
	if err != nil {
		return 0, cliexit.Call(c, "pgn", err)
	}
	n := 0
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, cliexit.Call(c, "pgn", err)
		}
		if _, err := io.WriteString(w, resp.GetPgn()); err != nil {
			return n, err
		}
		n += int(resp.GetGames())
	}
}

// RunTournament submits a tournament as one test per pairing and prints
// their ids; with wait it follows them to their end (a progress line on
// stderr per batch), prints each pairing's counts and one rating table
// over all of them and, with pgnout, writes every game there. A test that
// ends other than done is a failure (exit status 1).
func RunTournament(ctx context.Context, out, stderr io.Writer, c *clusterclient.Client, tests []matchplan.PairingTest, plan *matchplan.Plan, o TestOutput) error {
	wait, pgnout := o.Wait, o.PGNOut
	ids := make([]string, len(tests))
	for i, pt := range tests {
		job, resumed, err := submitOrResume(ctx, c, pt.Spec, o.Resume)
		if err != nil {
			if i > 0 {
				fmt.Fprintf(stderr, "submitted before the error: %v\n", ids[:i])
			}
			return err
		}
		ids[i] = job.GetJobId()
		if resumed {
			fmt.Fprintf(stderr, "test %s: resuming, %d games played\n", ids[i], job.GetMatchProgress().GetGames())
		}
		if wait {
			fmt.Fprintf(stderr, "test %s: %s vs %s, %s, %d games\n", ids[i], pt.Spec.GetEngineA().GetName(), pt.Spec.GetEngineB().GetName(), testLimits(pt.Spec), pt.Spec.GetGames())
		} else {
			fmt.Fprintln(out, ids[i])
		}
	}
	if !wait {
		return nil
	}
	var results []match.PairingResult
	var failed []string
	for i, id := range ids {
		final, err := WaitTest(ctx, c, id, stderr, nil)
		if err != nil {
			return err
		}
		mp := final.GetMatchProgress()
		p := mp.GetPentanomial()
		results = append(results, match.PairingResult{A: tests[i].A, B: tests[i].B,
			Wins: int64(mp.GetWins()), Draws: int64(mp.GetDraws()), Losses: int64(mp.GetLosses()),
			Penta: sprt.Pentanomial{int64(p.GetLl()), int64(p.GetLd()), int64(p.GetDd()), int64(p.GetWd()), int64(p.GetWw())}})
		fmt.Fprintf(stderr, "test %s %s: %s vs %s +%d =%d -%d\n", id, StateName(final.GetState()), tests[i].Spec.GetEngineA().GetName(),
			tests[i].Spec.GetEngineB().GetName(), mp.GetWins(), mp.GetDraws(), mp.GetLosses())
		if final.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
			failed = append(failed, fmt.Sprintf("test %s %s: %s", id, StateName(final.GetState()), final.GetError()))
		}
	}
	st := matchplan.RatingsOf(plan, results)
	fmt.Fprintf(out, "Tournament: %s; %s; tests %s\n", plan.Schedule, plan.Limits(), strings.Join(ids, ", "))
	fmt.Fprint(out, st.Ratings())
	if pgnout != "" {
		f, err := os.Create(pgnout)
		if err != nil {
			return cliexit.Usage("%v", err)
		}
		total := 0
		for i, id := range ids {
			w := newRoundTagWriter(f, plan.Schedule, i)
			n, err := StreamPGN(ctx, c, id, w)
			total += n
			if err == nil {
				err = w.flush()
			}
			if err != nil {
				f.Close()
				return err
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d games to %s\n", total, pgnout)
	}
	if len(failed) > 0 {
		return cliexit.Failure("%s", strings.Join(failed, "; "))
	}
	return nil
}

// submitOrResume submits spec, or with resume returns the running test
// of the same spec when there is one (resumed true). Same spec: the same
// games, played the same way. A job carries no openings, only how many;
// what `modify` changes (priority, share, tags, notes) and the batch size
// the coordinator chose do not make another test.
func submitOrResume(ctx context.Context, c *clusterclient.Client, spec *arbiterv1.MatchSpec, resume bool) (job *arbiterv1.Job, resumed bool, err error) {
	if resume {
		job, err := runningTest(ctx, c, spec)
		if err != nil {
			return nil, false, cliexit.Call(c, "list jobs", err)
		}
		if job != nil {
			return job, true, nil
		}
	}
	resp, err := c.Jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: spec})
	if err != nil {
		return nil, false, cliexit.Call(c, "submit", err)
	}
	return resp.GetJob(), false, nil
}

// runningTest returns the oldest running test whose spec is spec (see
// submitOrResume), or nil.
func runningTest(ctx context.Context, c *clusterclient.Client, spec *arbiterv1.MatchSpec) (*arbiterv1.Job, error) {
	want := proto.Clone(spec).(*arbiterv1.MatchSpec)
	want.Openings = nil
	resp, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Limit: 1000, State: "running", Kind: "test"})
	if err != nil {
		return nil, err
	}
	jobs := resp.GetJobs() // newest first
	for i := len(jobs) - 1; i >= 0; i-- {
		j := jobs[i]
		if int(j.GetMatch().GetOpeningsCount()) != len(spec.GetOpenings()) {
			continue
		}
		full, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: j.GetJobId()})
		if err != nil {
			return nil, err
		}
		got := proto.Clone(full.GetJob().GetMatch()).(*arbiterv1.MatchSpec)
		got.OpeningsCount = 0
		if want.BatchPairs == 0 {
			got.BatchPairs = 0 // the coordinator's choice
		}
		got.Priority, got.Throughput, got.Tags, got.Notes = want.Priority, want.Throughput, want.Tags, want.Notes
		withStored(got.GetEngineA(), want.GetEngineA())
		withStored(got.GetEngineB(), want.GetEngineB())
		if proto.Equal(got, want) {
			return full.GetJob(), nil
		}
	}
	return nil, nil
}

// withStored sets in stored, to want's values, what the coordinator
// filled in of the artifact or net that want names (sizes, names, what an
// upload said of the engine), so that proto.Equal compares only what the
// client gave; a hash want gives as a prefix is compared as a prefix.
func withStored(stored, want *arbiterv1.EngineSpec) {
	if n, w := stored.GetNet(), want.GetNet(); n != nil && w != nil && w.Sha256 != "" && strings.HasPrefix(n.Sha256, w.Sha256) {
		n.Sha256, n.Size, n.Name = w.Sha256, w.Size, w.Name
		if w.Option == "" && n.Option == "EvalFile" {
			n.Option = ""
		}
	}
	if a, w := stored.GetArtifact(), want.GetArtifact(); a != nil && w != nil && w.Sha256 != "" && strings.HasPrefix(a.Sha256, w.Sha256) {
		kind, build, exe, bench := a.Kind, a.Build, a.Exe, a.Bench
		if w.Kind == arbiterv1.ArtifactKind_ARTIFACT_KIND_UNSPECIFIED {
			kind = w.Kind
		}
		proto.Reset(a)
		a.Sha256, a.Kind, a.Build, a.Exe, a.Bench = w.Sha256, kind, build, exe, bench
	}
}

// capReached reports whether SPRT test j ended done at its game cap with
// neither hypothesis accepted.
func capReached(j *arbiterv1.Job) bool {
	spec, mp := j.GetMatch(), j.GetMatchProgress()
	return spec.GetSprt() != nil && spec.GetGames() > 0 && j.GetState() == arbiterv1.JobState_JOB_STATE_DONE &&
		mp.GetSprtState() != string(sprt.Accepted) && mp.GetSprtState() != string(sprt.Rejected)
}

// PrintWorkers prints games and incidents by worker.
func PrintWorkers(out io.Writer, workers []*arbiterv1.WorkerIncidents) {
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

// sortedOptions is an engine's options as "k=v" in name order.
func sortedOptions(opts map[string]string) []string {
	out := make([]string, 0, len(opts))
	for k, v := range opts {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
