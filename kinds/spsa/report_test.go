package spsa_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/kinds/spsa"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/spec/spsaplan"
	sp "github.com/arbiter-chess/arbiter/spsa"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// A tune through a cluster in this process: RunTuneThen submits it, follows
// it with a line per update, prints it and downloads every game; export
// prints the values status shows; the job list has its row.
func TestRunTuneOnCluster(t *testing.T) {
	c := farmtest.Start(t, 1).Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plan, err := spsaplan.Parse(ctx, spsaplan.Flags{Engine: "name=dev,builtin,option.Hash=1", Each: "nodes=300",
		Openings: "file=../../books/uho-200.epd", Params: "from-engine:RFPMargin,FutMargin", Pairs: 6, BatchPairs: 2,
		Alpha: sp.DefaultAlpha, Gamma: sp.DefaultGamma, ARatio: sp.DefaultARatio, HangTimeout: 30000, Throughput: 1, Remote: true})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := plan.Spec()
	if err != nil {
		t.Fatal(err)
	}
	pgn := filepath.Join(t.TempDir(), "tune.pgn")
	var out, stderr bytes.Buffer
	if err := spsa.RunTuneThen(ctx, &out, &stderr, c, spec, true, pgn, nil); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), stderr.String())
	}
	report := out.String()
	for _, want := range []string{"Tune:       t", "(spsa)\nState:      done\n", "Engine:     dev (embedded, Hash=1), played as dev+",
		"Design:     2 parameters, 6 pairs in 3 batches of 2; alpha 0.602, gamma 0.101, A 0 (A ratio 0.1)",
		"3 of 3 updates applied (6 pairs)", "Games:      12, dev+:", "(PGNs stored: 12)",
		"PARAM      START  CURRENT", "RFPMargin  75", "FutMargin  90", "Trajectory (theta at the start, every update, and now):", "up-1"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// One trajectory row per update and the start.
	rows := 0
	for _, l := range strings.Split(report[strings.Index(report, "UPDATES"):], "\n")[1:] {
		if f := strings.Fields(l); len(f) == 3 {
			if _, err := strconv.Atoi(f[0]); err == nil {
				rows++
			}
		}
	}
	if rows != 4 {
		t.Errorf("%d trajectory rows, want 4:\n%s", rows, report)
	}
	// Snapshots are coalesced: a line per update seen, the last one's.
	if !strings.Contains(stderr.String(), "\nupdates 3/3, games 12: ") || !strings.Contains(stderr.String(), "wrote 12 games to "+pgn) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	t.Logf("report:\n%s", report)
	if b, _ := os.ReadFile(pgn); strings.Count(string(b), "[Event ") != 12 || !strings.Contains(string(b), `[White "dev+"]`) {
		t.Errorf("%d games downloaded, want 12 of dev+ and dev-", strings.Count(string(b), "[Event "))
	}
	id := strings.Fields(report)[1]
	job, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	var exp bytes.Buffer
	if err := spsa.ExportTune(ctx, &exp, c, id, sp.OpenBench); err != nil {
		t.Fatal(err)
	}
	cur := job.GetJob().GetSpsaProgress().GetParams()
	want := "RFPMargin, int, " + strconv.Itoa(int(cur[0].GetCurrent()+0.5)) + ", 20, 300, 5, 0.002\n"
	if !strings.HasPrefix(exp.String(), want) || strings.Count(exp.String(), "\n") != 2 {
		t.Errorf("export:\n%s\nwant it to start %q", exp.String(), want)
	}
	resp, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var list bytes.Buffer
	if err := jobreport.PrintJobs(&list, resp.GetJobs()); err != nil || !strings.Contains(list.String(), id+"  done   dev     nodes=300  3/3      6/6    12     RFPMargin,FutMargin") {
		t.Errorf("list %v:\n%s", err, list.String())
	}
	// A test is not a tune; an unknown job is named.
	if err := spsa.ExportTune(ctx, &exp, c, "t000000000000", sp.Fishtest); cliexit.Code(err, -1) != 2 || !strings.Contains(err.Error(), "t000000000000") {
		t.Errorf("export of an unknown tune: %v", err)
	}
}

// A verification through a cluster in this process: VerifyTune plays the
// tune's values against its start values as an ordinary match linked to
// the tune, and the tune's status shows that test's games, W/D/L, Elo and
// state as the test's own status does. A test that names a job other than
// a tune is refused, and nothing is stored.
func TestVerifyTuneOnCluster(t *testing.T) {
	c := farmtest.Start(t, 1).Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A wide perturbation and a large r_end, so that θ moves off the start
	// in a few pairs and the two sides differ.
	plan, err := spsaplan.Parse(ctx, spsaplan.Flags{Engine: "name=dev,builtin,option.Hash=1,option.UseNNUE=false", Each: "nodes=300",
		Openings: "file=../../books/uho-200.epd", Params: "KnightValueMG,int,200,150,600,40,0.2;BishopValueMG,int,200,150,600,40,0.2",
		Pairs: 4, BatchPairs: 2, Alpha: sp.DefaultAlpha, Gamma: sp.DefaultGamma, ARatio: sp.DefaultARatio, HangTimeout: 30000,
		Throughput: 1, Remote: true})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := plan.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	var testID string
	err = spsa.RunTuneThen(ctx, &out, &stderr, c, spec, true, "", func(id string) error {
		tf := matchplan.TestFlags{Match: matchplan.Flags{Openings: "file=../../books/uho-200.epd,order=random,seed=3", Games: 8,
			HangTimeout: 30000}, Throughput: 1}
		var vout bytes.Buffer
		if err := spsa.VerifyTune(ctx, &vout, &stderr, c, id, tf, true, ""); err != nil {
			return err
		}
		testID = strings.Fields(vout.String())[1]
		return nil
	})
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), stderr.String())
	}
	tuneID := strings.Fields(out.String())[1]
	tune, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: tuneID})
	if err != nil {
		t.Fatal(err)
	}
	test, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: testID})
	if err != nil {
		t.Fatal(err)
	}
	vs := tune.GetJob().GetSpsaProgress().GetVerifications()
	if len(vs) != 1 {
		t.Fatalf("tune %s shows %d verifications, want 1 (test %s)", tuneID, len(vs), testID)
	}
	v, mp := vs[0], test.GetJob().GetMatchProgress()
	if v.GetJobId() != testID || v.GetKind() != "match" || v.GetState() != arbiterv1.JobState_JOB_STATE_DONE || v.GetUpdates() != 2 {
		t.Errorf("verification %v, want test %s, a match, done, at update 2", v, testID)
	}
	vp := v.GetProgress()
	if vp.GetGames() != 8 || vp.GetGames() != mp.GetGames() || vp.GetWins() != mp.GetWins() || vp.GetDraws() != mp.GetDraws() ||
		vp.GetLosses() != mp.GetLosses() || vp.GetElo() != mp.GetElo() || vp.GetEloCiLow() != mp.GetEloCiLow() ||
		vp.GetEloCiHigh() != mp.GetEloCiHigh() {
		t.Errorf("verification %v\nthe test's own progress %v", vp, mp)
	}
	// The sides: dev-tuned with θ now as export gives it, dev-start with
	// the start values, both with the tune's engine options.
	ms := test.GetJob().GetMatch()
	if ms.GetVerifiesTune() != tuneID || ms.GetVerifiesTuneUpdates() != 2 {
		t.Errorf("test verifies %q at %d, want %s at 2", ms.GetVerifiesTune(), ms.GetVerifiesTuneUpdates(), tuneID)
	}
	var opts bytes.Buffer
	if err := spsa.ExportTune(ctx, &opts, c, tuneID, sp.Options); err != nil {
		t.Fatal(err)
	}
	a, b := ms.GetEngineA(), ms.GetEngineB()
	got := "option.KnightValueMG=" + a.GetOptions()["KnightValueMG"] + ",option.BishopValueMG=" + a.GetOptions()["BishopValueMG"] + "\n"
	if a.GetName() != "dev-tuned" || got != opts.String() || a.GetOptions()["Hash"] != "1" {
		t.Errorf("engine A %v, want dev-tuned with %s", a, opts.String())
	}
	if b.GetName() != "dev-start" || b.GetOptions()["KnightValueMG"] != "200" || b.GetOptions()["BishopValueMG"] != "200" || b.GetOptions()["Hash"] != "1" {
		t.Errorf("engine B %v, want dev-start with the start values", b)
	}
	if got == "option.KnightValueMG=200,option.BishopValueMG=200\n" {
		t.Errorf("θ did not move off the start (%s): the test does not tell the sides apart", got)
	}
	// status TUNE prints the Elo as the test's own report does.
	var tuneOut, testOut bytes.Buffer
	spsa.PrintTune(&tuneOut, tune.GetJob())
	jobreport.PrintTest(&testOut, test.GetJob())
	elo := spsa.VerifyElo(mp)
	if !strings.Contains(testOut.String(), "Elo: "+elo+", nElo") {
		t.Errorf("the test's report lacks Elo %q:\n%s", elo, testOut.String())
	}
	row := fmt.Sprintf("%s  match  done   2          8      %d", testID, vp.GetWins())
	if !strings.Contains(tuneOut.String(), row) || !strings.Contains(tuneOut.String(), elo) {
		t.Errorf("status of the tune lacks %q and %q:\n%s", row, elo, tuneOut.String())
	}
	t.Logf("tune:\n%s", tuneOut.String())
	// status TUNE --json: the same figures as the test's own --json.
	tj, sj := jobreport.NewJobJSON(tune.GetJob()), jobreport.NewJobJSON(test.GetJob())
	if tj.Tune == nil || len(tj.Tune.Verifications) != 1 || sj.Test == nil {
		t.Fatalf("status --json: tune %+v, test %+v", tj.Tune, sj.Test)
	}
	jv := tj.Tune.Verifications[0]
	if jv.JobID != testID || jv.State != sj.State || jv.Games != sj.Test.Games || jv.Wins != sj.Test.Wins || jv.Losses != sj.Test.Losses ||
		jv.Elo == nil || sj.Test.Elo == nil || *jv.Elo != *sj.Test.Elo || *jv.EloCI95[0] != *sj.Test.EloCI95[0] || *jv.EloCI95[1] != *sj.Test.EloCI95[1] {
		t.Errorf("status --json of the tune: verification %+v; the test's own: %+v", jv, sj.Test)
	}
	// A test that claims to verify a job that is not a tune.
	bad := proto.Clone(ms).(*arbiterv1.MatchSpec)
	bad.VerifiesTune = testID
	before, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: bad})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "verifies_tune") || !strings.Contains(err.Error(), testID) {
		t.Errorf("a test verifying test %s: %v, want INVALID_ARGUMENT naming verifies_tune", testID, err)
	}
	after, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.GetJobs()) != len(before.GetJobs()) {
		t.Errorf("%d jobs after a refused test, %d before", len(after.GetJobs()), len(before.GetJobs()))
	}
}
