package jobreport_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/client/jobreport"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/kinds/datagen"
	"github.com/arbiter-chess/arbiter/kinds/epd"
	_ "github.com/arbiter-chess/arbiter/kinds/perft" // its report: PrintJob of a perft job, the perft rows of list_test.go
	_ "github.com/arbiter-chess/arbiter/kinds/spsa"  // its report: the tune rows of list_test.go, the tune family in the order of the tables
	_ "github.com/arbiter-chess/arbiter/kinds/test"  // its report: the test rows and --json's test object of list_test.go
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// A test through a cluster in this process: jobreport.RunTest submits, follows it
// with a line per batch, prints the report and downloads every game;
// status's views of the same test agree.
func TestRunTestOnCluster(t *testing.T) {
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c, err := cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tf := matchplan.TestFlags{Match: matchplan.Flags{Engines: []string{"name=a,builtin", "name=b,builtin"}, Each: "nodes=300",
		Openings: "file=../../books/uho-200.epd", Games: 4, HangTimeout: 30000}, BatchPairs: 1, Throughput: 1}
	spec, plan, err := tf.Spec(false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pgn := filepath.Join(t.TempDir(), "games.pgn")
	var out, stderr bytes.Buffer
	if err := jobreport.RunTest(ctx, &out, &stderr, c, spec, plan, true, pgn); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), stderr.String())
	}
	for _, want := range []string{"Test:       s", "(match)\nState:      done\n", "Engines:    a (embedded) vs b (embedded)", "Ptnml(0-2)", "Games:      4 (PGNs stored: 4)", "up-1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(stderr.String(), "games 4: ") || !strings.Contains(stderr.String(), "wrote 4 games to "+pgn) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if b, _ := os.ReadFile(pgn); strings.Count(string(b), "[Event ") != 4 {
		t.Errorf("%d games downloaded, want 4", strings.Count(string(b), "[Event "))
	}
	resp, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var list bytes.Buffer
	if err := jobreport.PrintJobs(&list, resp.GetJobs()); err != nil || !strings.Contains(list.String(), "done") || !regexp.MustCompile(`done +a vs b +\S+ +4/4 +\S+ ± \S+ +-\n`).MatchString(list.String()) {
		t.Errorf("list %v:\n%s", err, list.String())
	}
	if _, err := jobreport.DownloadPGN(ctx, c, "s000000000000", filepath.Join(t.TempDir(), "x.pgn")); cliexit.Code(err, -1) != 2 {
		t.Errorf("PGN of an unknown test: %v, want status 2", err)
	}
	if _, err := jobreport.DownloadPGN(ctx, c, "s000000000000", "/no/such/dir/x.pgn"); cliexit.Code(err, -1) != 2 {
		t.Errorf("PGN to an impossible path: %v, want status 2", err)
	}
}

// A round-robin of three engines on a cluster in this process: one test
// per pairing, rated together; every game downloaded into one file.
func TestRunTournamentOnCluster(t *testing.T) {
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c, err := cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tf := matchplan.TestFlags{Match: matchplan.Flags{Engines: []string{"name=a,builtin", "name=b,builtin,option.UseNNUE=false,option.KnightValueMG=200", "name=c,builtin,option.UseNNUE=false,option.KnightValueMG=500"},
		Each: "nodes=300", Openings: "file=../../books/uho-200.epd", Rounds: 1, Games: 2, HangTimeout: 30000}, BatchPairs: 1, Throughput: 1}
	if !tf.Tournament() {
		t.Fatal("three engines are a tournament")
	}
	tests, plan, err := tf.TournamentSpecs()
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 3 || tests[2].A != 1 || tests[2].B != 2 || tests[0].Spec.GetGames() != 2 || tests[1].Spec.GetEngineB().GetName() != "c" {
		t.Fatalf("tests %+v", tests)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pgn := filepath.Join(t.TempDir(), "t.pgn")
	var out, stderr bytes.Buffer
	if err := jobreport.RunTournament(ctx, &out, &stderr, c, tests, plan, jobreport.TestOutput{Wait: true, PGNOut: pgn}); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), stderr.String())
	}
	for _, want := range []string{"Tournament: roundrobin of 3 engines", "Rank Name", "\n   1 ", "\n   3 ", "Elo relative to the average"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(stderr.String(), "wrote 6 games to "+pgn) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if b, _ := os.ReadFile(pgn); strings.Count(string(b), "[Event ") != 6 {
		t.Errorf("%d games downloaded, want 6", strings.Count(string(b), "[Event "))
	}
	for _, edit := range []func(*matchplan.TestFlags){
		func(f *matchplan.TestFlags) { f.Match.Repeat = 1 },
		func(f *matchplan.TestFlags) { f.Match.Engines[2] = "builtin" },
	} {
		bad := tf
		bad.Match.Engines = append([]string(nil), tf.Match.Engines...)
		edit(&bad)
		if _, _, err := bad.TournamentSpecs(); err == nil {
			t.Errorf("%+v accepted", bad.Match)
		}
	}
}

// An SPRT test that reaches its game cap undecided says so in its state
// and verdict, rather than "done" beside "no decision yet" (issue 32).
func TestSPRTCapReachedSaysSo(t *testing.T) {
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c, err := cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tf := matchplan.TestFlags{Match: matchplan.Flags{Engines: []string{"name=a,builtin", "name=b,builtin"}, Each: "nodes=300",
		Openings: "file=../../books/uho-200.epd", Games: 4, SPRT: "elo0=0,elo1=5", HangTimeout: 30000}, BatchPairs: 1, Throughput: 1}
	spec, plan, err := tf.Spec(true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, stderr bytes.Buffer
	if err := jobreport.RunTest(ctx, &out, &stderr, c, spec, plan, true, ""); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), stderr.String())
	}
	for _, want := range []string{"State:      done (cap of 4 games reached without an SPRT decision)", ": no decision: the game cap was reached"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "no decision yet") {
		t.Errorf("a finished test says no decision yet:\n%s", out.String())
	}
}

// TestStatusTablesInTheKindsOrder: with every kind installed (this test
// binary imports localcluster, which imports kinds/install), status lists
// its tables in the order the families' reports give, as before some of
// them moved into kinds/: tests, tunes, perft jobs, datasets, EPD suites.
func TestStatusTablesInTheKindsOrder(t *testing.T) {
	want := []jobkind.Family{jobkind.FamilyTest, jobkind.FamilyTune, jobkind.FamilyPerft, datagen.Family, epd.FamilyEPD}
	if got := jobreport.Families(); !reflect.DeepEqual(got, want) {
		t.Errorf("status's tables: %v, want %v", got, want)
	}
}
