//go:build unix

package e2e

// SPSA tunes of uploaded engines: a coordinator and two worker processes
// whose working directories hold no engine; a copy of the arbiter binary,
// run as "arbiter uci", is uploaded by `submit spsa` and tuned on two of
// its parameters. The store must hold one update per batch whose replay
// gives θ, every game's PGN the values each side played, and the artifact
// must be kept while the tune runs. Refusals: a parameter the uploaded
// binary lacks (by the client, which runs it, before anything is stored),
// an artifact the coordinator does not have, from-engine of a source tree,
// and a parameter the engine lacks sent past the client (by every worker,
// shown by status).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/spsaspec"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

func TestClusterTuneOfUploadedEngine(t *testing.T) {
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	dev := filepath.Join(t.TempDir(), "dev-engine")
	copyFile(t, bin, dev)
	base := append([]string{"submit", "spsa"}, clientArgs(addr)...)
	base = append(base, "--each", "nodes=1000", "--openings", "file="+book+",order=random,seed=5", "--pairs", "8", "--batch-pairs", "2")
	uploaded := "name=dev,upload=" + dev + ",args=uci"

	// Refused before anything is sent or stored.
	src, err := filepath.Abs("testdata/tinyuci")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		engine, params string
		code           int
		want           string
	}{
		{uploaded, "NoSuch,1,0,5,1,0.002", 2, `param "NoSuch": the engine has no option`},
		{"name=dev,source=" + src + ",build=make EXE=engine", "from-engine", 2, "give the parameters as a list"},
		{"name=dev,artifact=deadbeefdeadbeef", "RFPMargin,75,20,300,5,0.002", 2, "not stored on this coordinator"},
	} {
		out, code := cli(t, append(append([]string(nil), base...), "--engine", c.engine, "--params", c.params)...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s --params %s: exit %d, want %d and %q in:\n%s", c.engine, c.params, code, c.code, c.want, out)
		}
		t.Logf("%s --params %s: exit %d: %s", c.engine, c.params, code, strings.TrimSpace(out))
	}
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tunes int
	if err := db.QueryRow("SELECT COUNT(*) FROM tunes").Scan(&tunes); err != nil || tunes != 0 {
		t.Fatalf("%d tunes stored after refusals (%v)", tunes, err)
	}
	if out, code := cli(t, append([]string{"engine", "list"}, clientArgs(addr)...)...); code != 0 || !strings.Contains(out, "0 engines") {
		t.Fatalf("engines stored after refusals: exit %d:\n%s", code, out)
	}

	startWorkerIn(t, addr, "w1")
	startWorkerIn(t, addr, "w2")
	out, code := cli(t, append(append([]string(nil), base...), "--engine", uploaded, "--params", "from-engine:RFPMargin,FutMargin")...)
	if code != 0 {
		t.Fatalf("submit spsa: exit %d:\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	id := lines[len(lines)-1]
	conn := dial(t, addr, token)
	j := getJob(t, conn, id)
	e := j.GetSpsa().GetEngine()
	sha := e.GetArtifact().GetSha256()
	if len(sha) != 64 || e.GetCommand() != "" || e.GetArtifact().GetKind() != arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY {
		t.Fatalf("tuned engine %v", e)
	}
	final := waitFor(t, conn, id, 3*time.Minute, "done", done)
	cfg := spsaspec.Config(final.GetSpsa())
	cfg.BatchPairs = int(final.GetSpsaProgress().GetBatchPairs())
	all := tuneUpdates(t, data, id)
	if len(all) != 4 || cfg.Batches() != 4 {
		t.Fatalf("%d updates stored of %d batches, want 4", len(all), cfg.Batches())
	}
	replayed := checkUpdates(t, cfg, all)
	theta := currentTheta(final)
	if !slices.Equal(replayed.Theta(), theta) {
		t.Fatalf("final θ %v; the replay of the store gives %v", theta, replayed.Theta())
	}
	if sp := final.GetSpsaProgress(); sp.GetGames() != 16 || sp.GetWins()+sp.GetDraws()+sp.GetLosses() != 16 {
		t.Fatalf("final counts: %d games, W/D/L %d/%d/%d", sp.GetGames(), sp.GetWins(), sp.GetDraws(), sp.GetLosses())
	}
	out, code = cli(t, append([]string{"status", id}, clientArgs(addr)...)...)
	for _, want := range []string{"State:      done", "4 of 4 updates applied", "uploaded " + sha[:12], "Artifact:   dev " + sha + ", binary", "RFPMargin", "FutMargin"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("status: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	t.Logf("status:\n%s", out)
	out, code = cli(t, append([]string{"status", id, "--json"}, clientArgs(addr)...)...)
	var js jobreport.JobJSON
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || js.Tune == nil || js.Tune.Engine.Artifact == nil ||
		js.Tune.Engine.Artifact.SHA256 != sha || js.Tune.Engine.Artifact.Kind != "binary" {
		t.Fatalf("status --json: exit %d, %v, no artifact %s:\n%s", code, err, sha, out)
	}
	pgn := filepath.Join(t.TempDir(), "tune.pgn")
	if out, code := cli(t, append([]string{"pgn", id, "-o", pgn}, clientArgs(addr)...)...); code != 0 || countPGN(t, pgn) != 16 {
		t.Fatalf("pgn: exit %d, %d games: %s", code, countPGN(t, pgn), out)
	}
	games, err := os.ReadFile(pgn)
	if err != nil {
		t.Fatal(err)
	}
	tag := regexp.MustCompile(`\[(White|Black)Params "RFPMargin=-?\d+(\.\d+)?,FutMargin=-?\d+(\.\d+)?"\]`)
	if n := len(tag.FindAllString(string(games), -1)); n != 32 {
		t.Fatalf("%d WhiteParams/BlackParams tags with both parameters in 16 games:\n%s", n, lastLines(string(games), 30))
	}

	// A parameter the engine lacks, sent past the client's check: the
	// coordinator cannot ask the engine, every worker refuses the batch
	// when the engine refuses the option, and status says why.
	jobs := arbiterv1.NewJobServiceClient(conn)
	spec := &arbiterv1.SpsaSpec{Engine: &arbiterv1.EngineSpec{Name: "dev", Args: []string{"uci"}, Artifact: &arbiterv1.EngineArtifact{Sha256: sha[:16]}},
		Params: []*arbiterv1.SpsaParam{{Name: "NoSuch", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002}},
		Pairs:  4, BatchPairs: 2,
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}},
		Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}}}
	resp, err := jobs.SubmitSpsa(ctxT(t, 10*time.Second), &arbiterv1.SubmitSpsaRequest{Spec: spec})
	if err != nil {
		t.Fatalf("tune of a parameter the engine lacks: %v", err)
	}
	bad := resp.GetJob().GetJobId()
	j = waitFor(t, conn, bad, 2*time.Minute, "both workers refuse", func(j *arbiterv1.Job) bool {
		n := 0
		for _, w := range j.GetSpsaProgress().GetWorkers() {
			if w.GetExcluded() && strings.Contains(w.GetReason(), "NoSuch") {
				n++
			}
		}
		return n == 2
	})
	if u := j.GetSpsaProgress().GetUpdates(); u != 0 {
		t.Fatalf("%d updates applied of a tune no worker can play", u)
	}
	out, code = cli(t, append([]string{"status", bad}, clientArgs(addr)...)...)
	if code != 0 || !strings.Contains(out, `option "NoSuch": the engine has no such option`) {
		t.Fatalf("status of the refused tune: exit %d:\n%s", code, out)
	}
	t.Logf("status of the refused tune:\n%s", out)
	// The artifact is kept while a tune of it runs (this one runs until
	// cancelled: no worker can play it).
	if out, code := cli(t, append([]string{"engine", "rm", sha}, clientArgs(addr)...)...); code == 0 || !strings.Contains(out, bad) {
		t.Fatalf("engine rm while the tune runs: exit %d:\n%s", code, out)
	} else {
		t.Logf("engine rm while %s runs: exit %d: %s", bad, code, strings.TrimSpace(out))
	}
	// An artifact SHA the coordinator does not have, past the client.
	spec.Engine.Artifact.Sha256 = "0123456789abcdef"
	if _, err := jobs.SubmitSpsa(ctxT(t, 10*time.Second), &arbiterv1.SubmitSpsaRequest{Spec: spec}); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(err.Error(), "0123456789abcdef") {
		t.Fatalf("unknown artifact: %v", err)
	}
	if out, code := cli(t, append([]string{"cancel", bad}, clientArgs(addr)...)...); code != 0 {
		t.Fatalf("cancel: exit %d: %s", code, out)
	}
	// Nothing runs with it now: it may go.
	if out, code := cli(t, append([]string{"engine", "rm", sha}, clientArgs(addr)...)...); code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("engine rm after the tunes: exit %d:\n%s", code, out)
	}
}
