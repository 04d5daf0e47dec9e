package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

const schemaDir = "../../docs/json"

// loadSchemas compiles every schema in docs/json, keyed by file name.
// Each is added under its $id so that one may $ref another by name, as
// jobs.schema.json does job.schema.json.
func loadSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c, ids := schemaCompiler(t)
	out := map[string]*jsonschema.Schema{}
	for name, id := range ids {
		s, err := c.Compile(id)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = s
	}
	return out
}

// schemaCompiler is a compiler holding every schema of docs/json under
// its $id, and their ids by file name.
func schemaCompiler(t *testing.T) (*jsonschema.Compiler, map[string]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.schema.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in %s: %v", schemaDir, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	ids := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		id := addSchema(t, c, f, b)
		if !strings.HasSuffix(id, "/"+filepath.Base(f)) {
			t.Fatalf("%s: $id %q does not end in the file's name", f, id)
		}
		ids[filepath.Base(f)] = id
	}
	return c, ids
}

// addSchema adds schema b (named what in errors) to c under its $id.
func addSchema(t *testing.T, c *jsonschema.Compiler, what string, b []byte) string {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	if id == "" {
		t.Fatalf("%s: no $id", what)
	}
	if err := c.AddResource(id, doc); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return id
}

// detailSchemas compiles the schema of the detail object each kind's
// report registered (jobreport.Report.DetailSchema), by family; their
// $refs reach docs/json's schemas.
func detailSchemas(t *testing.T) map[jobkind.Family]*jsonschema.Schema {
	t.Helper()
	c, _ := schemaCompiler(t)
	out := map[jobkind.Family]*jsonschema.Schema{}
	for _, f := range jobreport.Families() {
		r, _ := jobreport.ReportOf(f)
		if r.DetailJSON == nil {
			continue
		}
		id := addSchema(t, c, "the detail schema of family "+string(f), r.DetailSchema)
		s, err := c.Compile(id)
		if err != nil {
			t.Fatalf("the detail schema of family %s: %v", f, err)
		}
		out[f] = s
	}
	return out
}

// checkDetails validates the detail object of every job in out (lines of
// a job or of a list of jobs) against its kind's registered schema, and
// marks the families it checked in seen. A job of a kind with a
// registered detail schema and no detail fails.
func checkDetails(t *testing.T, what string, schemas map[jobkind.Family]*jsonschema.Schema, out string, seen map[jobkind.Family]bool) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var one struct {
			Kind   string          `json:"kind"`
			Detail json.RawMessage `json:"detail"`
			Jobs   []struct {
				Kind   string          `json:"kind"`
				Detail json.RawMessage `json:"detail"`
			} `json:"jobs"`
		}
		if json.Unmarshal([]byte(line), &one) != nil {
			continue // validateLines reports it
		}
		jobs := append(one.Jobs, struct {
			Kind   string          `json:"kind"`
			Detail json.RawMessage `json:"detail"`
		}{one.Kind, one.Detail})
		for _, j := range jobs {
			f := jobkind.Lookup(j.Kind).Family
			s := schemas[f]
			if s == nil {
				continue
			}
			if len(j.Detail) == 0 {
				t.Errorf("%s: a %s job without its detail object", what, j.Kind)
				continue
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j.Detail))
			if err == nil {
				err = s.Validate(inst)
			}
			if err != nil {
				t.Errorf("%s: the detail of a %s job does not match its kind's schema: %v\n%.2000s", what, j.Kind, err, j.Detail)
			}
			seen[f] = true
		}
	}
}

// validateLines checks that out is one or more lines of JSON (or one
// indented document when whole) each valid against schema.
func validateLines(t *testing.T, what string, s *jsonschema.Schema, out string, whole bool) {
	t.Helper()
	docs := strings.Split(strings.TrimSpace(out), "\n")
	if whole {
		docs = []string{out}
	}
	if strings.TrimSpace(out) == "" {
		t.Errorf("%s: no output", what)
		return
	}
	for i, d := range docs {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(d))
		if err != nil {
			t.Errorf("%s: line %d is not JSON: %v\n%s", what, i+1, err, d)
			continue
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s: line %d does not match its schema: %v\n%.2000s", what, i+1, err, d)
		}
	}
}

// TestJSONOutputsMatchSchemas runs every command that has --json, on this
// machine and against a cluster in this process (a coordinator and two
// workers on loopback), and validates what it prints against the schema
// docs/json.md names for it; every schema is exercised.
func TestJSONOutputsMatchSchemas(t *testing.T) {
	if testing.Short() {
		t.Skip("plays games and runs perft on a cluster")
	}
	schemas := loadSchemas(t)
	details := detailSchemas(t)
	used := map[string]bool{}
	detailSeen := map[jobkind.Family]bool{}
	check := func(schema string, whole bool, args ...string) string {
		t.Helper()
		s := schemas[schema]
		if s == nil {
			t.Fatalf("no schema %s", schema)
		}
		used[schema] = true
		stdout, stderr, err := runArbiter(t, "", args...)
		if err != nil {
			t.Errorf("%v: %v\n%s", args, err, stderr)
			return stdout
		}
		validateLines(t, strings.Join(args, " "), s, stdout, whole)
		if schema == "job.schema.json" || schema == "jobs.schema.json" {
			checkDetails(t, strings.Join(args, " "), details, stdout, detailSeen)
		}
		return stdout
	}

	dir := t.TempDir()
	suite := filepath.Join(dir, "suite.epd")
	os.WriteFile(suite, []byte("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 400\n"+
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 ;D1 48 ;D2 2039\n"), 0o644)
	sequence := filepath.Join(dir, "seq.jsonl")
	os.WriteFile(sequence, []byte("{\"pentanomial\": [0,1,2,1,0]}\n{\"pentanomial\": [0,2,4,3,1]}\n"), 0o644)

	check("version.schema.json", false, "version", "--json")
	check("bench.schema.json", false, "bench", "--json", "--depth", "3")
	check("perft.schema.json", false, "perft", "--depth", "3", "--json", "--divide", "--stats")
	check("perft.schema.json", false, "perft", "--depth", "4", "--json", "--hash", "1", "--threads", "1")
	check("perft.schema.json", false, "perft", "--epd", suite, "--json")
	check("sprt.schema.json", false, "sprt", "--penta", "29,205,392,219,37", "--sprt", "elo0=0,elo1=2", "--json")
	check("sprt.schema.json", false, "sprt", "--wdl", "700,964,600", "--sprt", "elo0=0,elo1=2,model=bayeselo", "--json")
	// No losses: Elo and its interval are infinite, printed as null.
	check("sprt.schema.json", false, "sprt", "--wdl", "5,0,0", "--sprt", "elo0=0,elo1=5,model=logistic", "--json")
	check("sprt-sequence.schema.json", false, "sprt", "--sequence", sequence, "--batch-pairs", "4", "--sprt", "elo0=0,elo1=5")
	if _, err := exec.LookPath("/usr/games/stockfish"); err == nil {
		check("verify.schema.json", true, "verify", "--engine", "cmd=/usr/games/stockfish", "--depth", "2", "--json")
	} else {
		t.Log("no /usr/games/stockfish: verify --json not checked")
		used["verify.schema.json"] = true
	}
	check("perft.schema.json", false, "up", "--temp", "--workers", "1", "--threads", "1", "--hash", "1", "--depth", "3", "--json")
	check("job.schema.json", false, "up", "--temp", "--workers", "1", "--threads", "1", "--hash", "1", "--engine", "name=a,builtin",
		"--engine", "name=b,builtin", "--each", "nodes=200", "--openings", "file=../../books/uho-200.epd", "--games", "2", "--json")

	checkLocalMatches(t, dir, check)

	t.Setenv(auth.EnvToken, "")
	cl, err := localcluster.Start(localcluster.Config{Workers: 2, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "json-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	client := []string{"--coordinator", cl.Addr(), "--token", cl.Token()}
	with := func(args ...string) []string { return append(args, client...) }

	check("perft.schema.json", false, with("submit", "perft", "--depth", "4", "--wait", "--json", "--divide", "--recheck", "1")...)
	check("perft.schema.json", false, with("perft", "--depth", "3", "--json")...)
	test := with("submit", "sprt", "--engine", "name=a,builtin", "--engine", "name=b,builtin", "--each", "nodes=200",
		"--openings", "file=../../books/uho-200.epd", "--sprt", "elo0=0,elo1=50", "--games", "4", "--batch-pairs", "1", "--wait", "--json")
	out := check("job.schema.json", false, test...)
	if !strings.Contains(out, `"kind":"sprt"`) || !strings.Contains(out, `"state":"done"`) {
		t.Errorf("submit sprt --wait --json: %s", out)
	}
	if !strings.Contains(out, `"anytime":{"level":0.95,"elo":[`) {
		t.Errorf("submit sprt --wait --json: no anytime interval in %s", out)
	}
	// A take of a group of two: its SPRT at alpha/2, the group listed.
	out = check("job.schema.json", false, with("submit", "sprt", "--engine", "name=a,builtin", "--engine", "name=b,builtin", "--each", "nodes=200",
		"--openings", "file=../../books/uho-200.epd", "--sprt", "elo0=0,elo1=50", "--games", "2", "--group", "idea-1", "--takes", "2", "--wait", "--json")...)
	if !strings.Contains(out, `"group":{"name":"idea-1","takes":2,"take_alpha":0.025,"members":[{"job_id":"`) || !strings.Contains(out, `"level":0.975`) {
		t.Errorf("submit sprt --group --takes --wait --json: %s", out)
	}
	// A match ended by its precision stop alone.
	out = check("job.schema.json", false, with("submit", "match", "--engine", "name=a,builtin", "--engine", "name=b,builtin", "--each", "nodes=200",
		"--openings", "file=../../books/uho-200.epd", "--stop", "precision=1000", "--batch-pairs", "1", "--wait", "--json")...)
	if !strings.Contains(out, `"stop_precision":1000,"stopped_by_precision":true`) || !strings.Contains(out, `"state":"done"`) {
		t.Errorf("submit match --stop precision=1000 --wait --json: %s", out)
	}
	// Node odds: the engine's own limits in its object, both in the test's.
	out = check("job.schema.json", false, with("submit", "match", "--engine", "name=a,builtin", "--engine", "name=b,builtin,nodes=300", "--each", "nodes=200",
		"--openings", "file=../../books/uho-200.epd", "--games", "2", "--wait", "--json")...)
	if !strings.Contains(out, `"name":"b","command":"embedded","protocol":"builtin","tc":"nodes=300"}`) || !strings.Contains(out, `"tc":"nodes=200 vs nodes=300"`) {
		t.Errorf("submit match --wait --json with per-engine limits: %s", out)
	}
	checkDatagenJSON(t, func(args ...string) string { return check("job.schema.json", false, with(args...)...) })
	// A job of every registered kind's example: its detail object is
	// checked below with every job's (status JOB --json).
	submitKindExamples(t, dir, func(args ...string) {
		if _, stderr, err := runArbiter(t, "", with(args...)...); err != nil {
			t.Errorf("%v: %v\n%s", args, err, stderr)
		}
	})
	running, _, err := runArbiter(t, "", with("submit", "perft", "--depth", "8", "--split-ply", "3")...)
	if err != nil {
		t.Fatal(err)
	}
	out = check("job.schema.json", false, with("cancel", strings.TrimSpace(running), "--json")...)
	if !strings.Contains(out, `"state":"cancelled"`) {
		t.Errorf("cancel --json: %s", out)
	}
	list := check("jobs.schema.json", false, with("status", "--json")...)
	for _, id := range jobIDs(list) {
		check("job.schema.json", false, with("status", id, "--json")...)
	}
	check("token.schema.json", false, with("token", "create", "--name", "json-client", "--role", "client", "--json")...)
	check("credentials.schema.json", false, with("token", "list", "--json")...)
	// A stored engine (any program will do: it is only listed).
	if _, stderr, err := runArbiter(t, "", with("engine", "upload", os.Args[0], "--name", "json-engine", "--bench", "780586")...); err != nil {
		t.Fatalf("engine upload: %v\n%s", err, stderr)
	}
	engines := check("engines.schema.json", false, with("engine", "list", "--json")...)
	var el struct{ Engines []struct{ SHA256 string } }
	if err := json.Unmarshal([]byte(engines), &el); err != nil || len(el.Engines) != 1 {
		t.Fatalf("engine list --json: %v: %s", err, engines)
	}
	out = check("engine.schema.json", false, with("engine", "show", el.Engines[0].SHA256[:12], "--json")...)
	if !strings.Contains(out, `"name":"json-engine"`) || !strings.Contains(out, `"bench":780586`) {
		t.Errorf("engine show --json: %s", out)
	}
	checkNetCommands(t, client, func(schema string, args ...string) string { return check(schema, false, args...) })

	for name := range schemas {
		if !used[name] && !checkedByAKind(t, name) {
			t.Errorf("docs/json/%s: no command's output was checked against it, here or by a kind's own tests", name)
		}
	}
	everyDetailChecked(t, details, detailSeen)
}

// checkLocalMatches plays local matches here with the builtin engine and
// checks each result through check (one indented object against
// match.schema.json).
func checkLocalMatches(t *testing.T, dir string, check func(schema string, whole bool, args ...string) string) {
	t.Helper()
	// Local matches, played here with the builtin engine: the result is
	// one indented object. The checks past the schema make sure each run
	// played what it was asked, so a match that printed an empty but valid
	// result still fails.
	book := "file=../../books/uho-200.epd"
	local := func(wants []string, args ...string) {
		t.Helper()
		base := []string{"match", "--engine", "name=a,builtin", "--engine", "name=b,builtin"}
		out := check("match.schema.json", true, append(append(base, args...), "--each", "nodes=300", "--openings", book, "--json")...)
		compact := strings.Join(strings.Fields(out), "")
		for _, want := range wants {
			if !strings.Contains(compact, want) {
				t.Errorf("match %v --json: want %s in\n%s", args, want, out)
			}
		}
	}
	local([]string{`"status":"complete","engines":["a","b"],"schedule":{"type":"roundrobin","rounds":1,"games":2,"repeat":2},"games":2,"scheduled":2`},
		"--games", "2")
	local([]string{`"games":2,"scheduled":2`, `"sprt":{"llr":`}, "--games", "2", "--sprt", "elo0=0,elo1=5")
	// Open-ended, ended by the precision stop (identical engines: every
	// pair scores alike, and three pairs bring the interval below 1000).
	local([]string{`"anytime":{"level":0.95,"score":[`, `"precision_stop":true`}, "--stop", "precision=1000")
	rrPGN := filepath.Join(dir, "rr.pgn")
	local([]string{`"engines":["a","b","c"]`, `"games":6,"scheduled":6`, `{"a":"b","b":"c",`, `"rank":3,`, `"state_file":"`, `"pgn_file":"` + rrPGN + `"`},
		"--engine", "name=c,builtin", "--rounds", "1", "--games", "2", "--pgnout", rrPGN)
	local([]string{`"type":"gauntlet","gauntlet_seeds":1`, `"games":4,"scheduled":4`, `"anchor":"a"`},
		"--engine", "name=c,builtin", "--tournament", "gauntlet", "--rounds", "1", "--games", "2")
}

// everyDetailChecked fails for a family whose registered detail schema
// no job's detail was checked against.
func everyDetailChecked(t *testing.T, schemas map[jobkind.Family]*jsonschema.Schema, seen map[jobkind.Family]bool) {
	t.Helper()
	for f := range schemas {
		if !seen[f] {
			t.Errorf("family %s registers a detail schema, but no job's detail was checked against it", f)
		}
	}
}

// checkDatagenJSON submits a dataset with --wait --json through run (the
// job schema's check against the farm): a kind outside the built-in
// families, whose data is the detail object its report registered,
// checked against the schema it registered.
func checkDatagenJSON(t *testing.T, run func(args ...string) string) {
	t.Helper()
	out := run("submit", "datagen", "--engine", "name=dev,builtin", "--positions", "60", "--each", "nodes=300",
		"--random-plies", "8-9", "--random-seed", "3", "--wait", "--json")
	if !strings.Contains(out, `"kind":"datagen"`) || !strings.Contains(out, `"detail":{`) || !strings.Contains(out, `"positions":60`) {
		t.Errorf("submit datagen --wait --json: %s", out)
	}
}

// submitKindExamples submits through submit the example job of every
// registered kind that has one (workload.Kind.Example), its engine the
// embedded one, so that every kind's detail object is checked, the kinds
// under kinds/ included, without a list of them here.
func submitKindExamples(t *testing.T, dir string, submit func(args ...string)) {
	t.Helper()
	for _, k := range workload.Kinds() {
		if k.Example == nil {
			continue
		}
		submit(append([]string{"submit"}, k.Example("name=dev,builtin", dir)...)...)
	}
}

// checkedByAKind reports whether a test of a kind's own folder (kinds/*/)
// validates output against docs/json/name: a kind's local command (such as
// arbiter epd) is checked where the kind lives.
func checkedByAKind(t *testing.T, name string) bool {
	t.Helper()
	tests, _ := filepath.Glob("../../kinds/*/*_test.go")
	for _, f := range tests {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "docs/json/"+name+`"`) {
			return true
		}
	}
	return false
}

// jobIDs picks the job ids out of status --json's list.
func jobIDs(list string) []string {
	var ids []string
	for _, part := range strings.Split(list, `"job_id":"`)[1:] {
		ids = append(ids, part[:strings.IndexByte(part, '"')])
	}
	return ids
}

// Every schema is documented in docs/json.md and every command the
// document names a schema for exists.
func TestJSONDocNamesEverySchema(t *testing.T) {
	doc, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range loadSchemas(t) {
		if !strings.Contains(string(doc), "json/"+name) {
			t.Errorf("docs/json.md does not name json/%s", name)
		}
	}
}

// A local match with the movegen gate prints the match schema's object:
// the gate's verdicts when it passed, status "refused" with the failed
// verdict when it did not.
func TestMatchGateJSONMatchesSchema(t *testing.T) {
	if _, err := os.Stat("/usr/games/stockfish"); err != nil {
		t.Skip("no /usr/games/stockfish")
	}
	s := loadSchemas(t)["match.schema.json"]
	bp := brokenPerftBinary(t)
	args := []string{"match", "--json", "--each", "nodes=300", "--games", "2", "--engine", "name=sf,cmd=/usr/games/stockfish,perft-gate=1"}
	stdout, stderr, err := runArbiter(t, "", append(args, "--engine", "name=dev,cmd="+bp+",args=-bug castle-through-check,perft-gate=1")...)
	if exitCode(err) != 1 || !strings.Contains(stdout, `"status": "refused"`) || !strings.Contains(stdout, `"fen":`) {
		t.Fatalf("refused match: exit %d (%v)\n%s\n%s", exitCode(err), err, stdout, stderr)
	}
	validateLines(t, "refused match", s, stdout, true)
	stdout, stderr, err = runArbiter(t, "", append(args, "--engine", "name=sf2,cmd=/usr/games/stockfish,perft-gate=1")...)
	if err != nil || strings.Count(stdout, `"passed": true`) != 2 {
		t.Fatalf("gated match: %v\n%s\n%s", err, stdout, stderr)
	}
	validateLines(t, "gated match", s, stdout, true)
}
