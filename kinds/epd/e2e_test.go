package epd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// The farm end to end: the real binary as a coordinator and two workers
// on loopback, driven by `arbiter submit epd` and `arbiter status`.

const farmToken = "epd-farm-test-token"

func startFarmProcess(t *testing.T, bin string, args ...string) *proctest.Process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ARBITER_TOKEN="+farmToken)
	return proctest.Start(t, cmd, args[0])
}

var listeningRE = regexp.MustCompile(`arbiter coordinator: listening on (\S+)`)

func startCoordinator(t *testing.T, bin, addr, data string) *proctest.Process {
	t.Helper()
	c := startFarmProcess(t, bin, "coordinator", "--listen", addr, "--data", data, "--lease-duration", "6s", "--log-level", "debug")
	c.WaitFor(t, listeningRE, 60*time.Second)
	return c
}

func startWorker(t *testing.T, bin, addr, name string) *proctest.Process {
	t.Helper()
	return startFarmProcess(t, bin, "worker", "--coordinator", addr, "--token", farmToken, "--threads", "1", "--name", name)
}

// writeSuite writes the first n lines of a testdata suite (all when n is
// 0) to a file of the test's.
func writeSuite(t *testing.T, name string, n int) string {
	t.Helper()
	lines := strings.SplitAfter(string(readTestdata(t, name)), "\n")
	if n > 0 && n < len(lines) {
		lines = lines[:n]
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// farmReport reads a finished job's results through the JobService, as
// `arbiter submit epd --wait --json` prints them.
func farmReport(t *testing.T, addr, jobID string) (*arbiterv1.Job, ReportJSON) {
	t.Helper()
	c, err := clusterclient.Connect(clusterclient.Options{Address: addr, Token: farmToken})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: jobID})
	if err != nil {
		t.Fatal(err)
	}
	run, err := farmRunOf(resp.GetJob())
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetJob(), reportJSON(run.cfg, run.names, Table(run.names, run.results), run.results)
}

// comparable is what must be equal between a farm run and a local run at
// fixed nodes: everything but wall times and the engine's clock.
func comparable(r ResultJSONLine) string {
	r.Seconds, r.SolveSeconds = 0, nil
	b, _ := json.Marshal(r)
	return string(b)
}

// sameResults says how the farm's results differ from the local run's
// ("" when every per-position result is equal).
func sameResults(farm, local ReportJSON) string {
	if len(farm.Results) != len(local.Results) {
		return fmt.Sprintf("%d results on the farm, %d locally", len(farm.Results), len(local.Results))
	}
	var diffs []string
	for i := range local.Results {
		if f, l := comparable(farm.Results[i]), comparable(local.Results[i]); f != l {
			diffs = append(diffs, "farm  "+f+"\nlocal "+l)
		}
	}
	if len(diffs) > 0 {
		return fmt.Sprintf("%d results differ:\n%s", len(diffs), strings.Join(diffs[:min(len(diffs), 5)], "\n"))
	}
	return ""
}

var jobIDRE = regexp.MustCompile(`EPD job (e[0-9a-f]+):`)

// TestFarmWACKilledWorker is the proof of EPD on the farm: WAC at
// nodes=200000 with the embedded engine through a real coordinator and
// two real workers; one worker is SIGKILLed while it holds a batch, and
// the coordinator is SIGKILLed and restarted on its data. Every
// per-position result equals a local `arbiter epd` run at the same nodes
// (the embedded engine on one thread at fixed nodes searches the same
// tree every run). Controls: the killed worker had searched batches
// before it died, and its last lease expired and was leased again (the
// coordinator's log says so); a local run at other nodes differs from the
// farm's, so the comparison can fail. The default run takes WAC's first
// 24 positions; ARBITER_EPD_FULL=1 takes all 299.
func TestFarmWACKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a coordinator and workers")
	}
	lines := 24
	if os.Getenv("ARBITER_EPD_FULL") == "1" {
		lines = 0
	}
	bin := buildArbiter(t)
	suitePath := writeSuite(t, "wac.epd", lines)
	addr, data := proctest.FreeAddr(t), filepath.Join(t.TempDir(), "data")
	coord := startCoordinator(t, bin, addr, data)
	w1 := startWorker(t, bin, addr, "w1")
	w2 := startWorker(t, bin, addr, "w2")

	out, errOut, code := runBinary(t, bin, "submit", "epd", "--coordinator", addr, "--token", farmToken, "--engine", "builtin",
		"--suite", suitePath, "--each", "nodes=200000", "--batch", "3")
	if code != 0 {
		t.Fatalf("submit: exit %d\n%s%s", code, out, errOut)
	}
	jobID := jobIDRE.FindStringSubmatch(out)[1]

	// w1 searched a batch and took the next: kill it while it searches.
	w1ID := coord.WaitFor(t, regexp.MustCompile(`"worker registered","worker_id":"(w-[0-9a-f]+)","name":"w1"`), time.Minute)[1]
	w1.WaitFor(t, regexp.MustCompile(`"epd batch searched"`), 5*time.Minute)
	held := coord.WaitFor(t, regexp.MustCompile(`"lease granted","job_id":"`+jobID+`","unit_id":"(`+jobID+`\.e[0-9]+)","worker_id":"`+w1ID+`"`), time.Minute)
	w1.Kill(t)
	t.Log("worker w1 killed")
	// The coordinator dies too, with results on disk, and comes back.
	time.Sleep(time.Second)
	beforeRestart := coord.Log()
	coord.Kill(t)
	coord = startCoordinator(t, bin, addr, data)
	t.Log("coordinator killed and restarted")
	waitDone(t, bin, addr, jobID, 30*time.Minute)

	// The control: w1 died holding a batch it had not searched, and that
	// batch was searched by w2 (the only worker left).
	grants := regexp.MustCompile(`"lease granted","job_id":"`+jobID+`","unit_id":"(`+jobID+`\.e[0-9]+)","worker_id":"`+w1ID+`"`).FindAllStringSubmatch(beforeRestart, -1)
	lastHeld := grants[len(grants)-1][1]
	searched := func(p *proctest.Process, unit string) bool {
		return regexp.MustCompile(`"epd batch searched".*"unit_id":"` + regexp.QuoteMeta(unit) + `"`).MatchString(p.Log())
	}
	if searched(w1, lastHeld) {
		t.Fatalf("control: w1 finished %s, the last batch it was granted (first grant %s): it was not killed mid-batch", lastHeld, held[1])
	}
	if !searched(w2, lastHeld) {
		t.Errorf("batch %s, held by the killed worker, was not searched by the other", lastHeld)
	}
	t.Logf("w1 killed holding %s; w2 searched it", lastHeld)

	job, farm := farmReport(t, addr, jobID)
	if p := job.GetProgress(); p.GetUnitsDone() != p.GetUnitsTotal() {
		t.Errorf("done with %d of %d batches merged", p.GetUnitsDone(), p.GetUnitsTotal())
	}
	local := localReport(t, bin, suitePath, "nodes=200000")
	if diff := sameResults(farm, local); diff != "" {
		t.Fatalf("the farm's results are not the local run's: %s", diff)
	}
	t.Logf("%d positions: farm solved %d, local %d", farm.Positions, farm.Engines[0].Solved, local.Engines[0].Solved)
	// The control: the comparison sees a run that searched less.
	if lines > 0 {
		if diff := sameResults(farm, localReport(t, bin, suitePath, "nodes=150000")); diff == "" {
			t.Error("control: a local run at nodes=150000 compares equal to the farm's at nodes=200000")
		}
	}
}

// localReport is `arbiter epd --json` of the suite with the embedded
// engine.
func localReport(t *testing.T, bin, suitePath, each string) ReportJSON {
	t.Helper()
	out, errOut, code := runBinary(t, bin, "epd", "--engine", "builtin", "--suite", suitePath, "--each", each, "--json", "--concurrency", "2")
	if code != 0 {
		t.Fatalf("local epd: exit %d\n%s", code, errOut)
	}
	var rep ReportJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// waitDone polls `arbiter status JOB` until the job is done.
func waitDone(t *testing.T, bin, addr, jobID string, within time.Duration) string {
	t.Helper()
	var out string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		var code int
		out, _, code = runBinary(t, bin, "status", jobID, "--coordinator", addr, "--token", farmToken)
		if code == 0 && strings.Contains(out, "State:    done") {
			return out
		}
		if strings.Contains(out, "State:    failed") || strings.Contains(out, "State:    cancelled") {
			t.Fatalf("job %s ended:\n%s", jobID, out)
		}
	}
	t.Fatalf("job %s not done within %v:\n%s", jobID, within, out)
	return ""
}

// TestFarmRefusesBadSuites: a suite with a bad line is refused by
// `arbiter submit epd` with the line's number (exit 2) before anything
// is sent, and a spec that a client did not check (an illegal bm, sent
// straight to the JobService) is refused by the coordinator naming the
// position; neither leaves a job. The control: the good suite's job is
// accepted and listed.
func TestFarmRefusesBadSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a coordinator")
	}
	bin := buildArbiter(t)
	addr := proctest.FreeAddr(t)
	startCoordinator(t, bin, addr, filepath.Join(t.TempDir(), "data"))
	conn := []string{"--coordinator", addr, "--token", farmToken}

	kaufman := writeSuite(t, "kaufman.epd", 0)
	_, errOut, code := runBinary(t, bin, append([]string{"submit", "epd", "--engine", "builtin", "--suite", kaufman, "--each", "nodes=1000"}, conn...)...)
	if code != 2 || !strings.Contains(errOut, "kaufman.epd:3: am \"Ne5\": ambiguous") {
		t.Errorf("bad suite: exit %d, want 2 naming line 3:\n%s", code, errOut)
	}

	c, err := clusterclient.Connect(clusterclient.Options{Address: addr, Token: farmToken})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	suite, err := ParseSuite("wac.epd", readTestdata(t, "wac.epd"))
	if err != nil {
		t.Fatal(err)
	}
	suite.Positions = suite.Positions[:3]
	spec := SpecOf(suite, []*arbiterv1.EngineSpec{matchspec.EngineToProto(match.EngineConfig{Name: "builtin", Proto: "builtin"})}, Limit{Nodes: 1000}, 0)
	spec.Positions[1].BestMoves = []string{"a1a8"} // not legal in WAC.002
	packed, _ := anypb.New(spec)
	_, err = c.Jobs.SubmitJob(ctx, &arbiterv1.SubmitJobRequest{Kind: Kind, Spec: packed})
	if err == nil || !strings.Contains(err.Error(), "position 1") || status.Code(err) != codes.InvalidArgument {
		t.Errorf("unchecked bad spec: %v, want INVALID_ARGUMENT naming position 1", err)
	}
	list, _, _ := runBinary(t, bin, append([]string{"status"}, conn...)...)
	if strings.Contains(list, "EPD") {
		t.Errorf("a refused suite left a job:\n%s", list)
	}

	good := writeSuite(t, "wac.epd", 3)
	out, errOut, code := runBinary(t, bin, append([]string{"submit", "epd", "--engine", "builtin", "--suite", good, "--each", "nodes=1000"}, conn...)...)
	if code != 0 || !jobIDRE.MatchString(out) {
		t.Fatalf("control: good suite: exit %d\n%s%s", code, out, errOut)
	}
	if list, _, _ := runBinary(t, bin, append([]string{"status"}, conn...)...); !strings.Contains(list, jobIDRE.FindStringSubmatch(out)[1]) {
		t.Errorf("control: the accepted job is not listed:\n%s", list)
	}
}

// TestSubmitWaitJSON: `arbiter submit epd --wait --json` through a real
// coordinator and worker prints, once the job is done, the object
// `arbiter epd --json` prints (it matches docs/json/epd.schema.json and
// every result equals a local run at the same nodes), and `arbiter status
// JOB` shows the job with its engines' counts and table. The control: the
// local run the farm's output is compared with is a real one of the same
// positions.
func TestSubmitWaitJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a coordinator and a worker")
	}
	bin := buildArbiter(t)
	suitePath := writeSuite(t, "wac.epd", 6)
	addr := proctest.FreeAddr(t)
	startCoordinator(t, bin, addr, filepath.Join(t.TempDir(), "data"))
	startWorker(t, bin, addr, "w1")
	conn := []string{"--coordinator", addr, "--token", farmToken}
	out, errOut, code := runBinary(t, bin, append([]string{"submit", "epd", "--engine", "builtin", "--suite", suitePath,
		"--each", "nodes=20000", "--batch", "4", "--wait", "--json"}, conn...)...)
	if code != 0 {
		t.Fatalf("submit --wait --json: exit %d\n%s%s", code, out, errOut)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := epdSchema(t).Validate(inst); err != nil {
		t.Fatalf("--json does not match its schema: %v\n%.2000s", err, out)
	}
	var farm ReportJSON
	if err := json.Unmarshal([]byte(out), &farm); err != nil {
		t.Fatal(err)
	}
	local := localReport(t, bin, suitePath, "nodes=20000")
	if len(local.Results) != 6 {
		t.Fatalf("control: the local run has %d results, want 6", len(local.Results))
	}
	if diff := sameResults(farm, local); diff != "" {
		t.Fatalf("the farm's --json is not the local run's: %s", diff)
	}
	jobID := regexp.MustCompile(`EPD job (e[0-9a-f]+) submitted`).FindStringSubmatch(errOut)[1]
	status, _, code := runBinary(t, bin, append([]string{"status", jobID}, conn...)...)
	want := fmt.Sprintf("builtin %d/6", farm.Engines[0].Solved)
	if code != 0 || !strings.Contains(status, "State:    done") || !strings.Contains(status, want) || !strings.Contains(status, "WAC.006") {
		t.Errorf("status %s: exit %d, want done, %q and every position:\n%s", jobID, code, want, status)
	}
}

// TestSubmitUploadedEngine: an engine uploaded by the submitter
// (upload=PATH, here Stockfish's binary) is fetched by the worker from the
// coordinator and searched in the worker's sandbox; at fixed nodes on one
// thread its results equal a local run of the same binary. The control:
// the worker's log shows it downloaded the artifact (the engine did not
// come from the worker's own disk).
func TestSubmitUploadedEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a coordinator and a worker")
	}
	needStockfish(t)
	bin := buildArbiter(t)
	suitePath := writeSuite(t, "wac.epd", 4)
	addr := proctest.FreeAddr(t)
	startCoordinator(t, bin, addr, filepath.Join(t.TempDir(), "data"))
	w := startFarmProcess(t, bin, "worker", "--coordinator", addr, "--token", farmToken, "--threads", "1", "--name", "w1",
		"--allow-uploads", "--data", filepath.Join(t.TempDir(), "worker"))
	out, errOut, code := runBinary(t, bin, "submit", "epd", "--coordinator", addr, "--token", farmToken,
		"--engine", "name=sf,upload="+stockfish, "--suite", suitePath, "--each", "nodes=10000", "--wait", "--json")
	if code != 0 {
		t.Fatalf("submit: exit %d\n%s%s", code, out, errOut)
	}
	w.WaitFor(t, regexp.MustCompile(`"artifact downloaded"`), time.Minute)
	var farm ReportJSON
	if err := json.Unmarshal([]byte(out), &farm); err != nil {
		t.Fatal(err)
	}
	lout, lerr, code := runBinary(t, bin, "epd", "--engine", "name=sf,cmd="+stockfish, "--suite", suitePath, "--each", "nodes=10000", "--json")
	if code != 0 {
		t.Fatalf("local: exit %d\n%s", code, lerr)
	}
	var local ReportJSON
	if err := json.Unmarshal([]byte(lout), &local); err != nil {
		t.Fatal(err)
	}
	if diff := sameResults(farm, local); diff != "" {
		t.Fatalf("the uploaded engine's results are not the local binary's: %s", diff)
	}
}
