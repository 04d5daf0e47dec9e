package epd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/net/html"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/kinds/epd"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// The kind's page, --json detail and result block for a real job: a farm
// in the test's process (farmtest: a real coordinator serving gRPC, the
// pages and the JSON API on loopback, a worker searching with the
// embedded engine) runs an EPD job whose engine names and position ids
// hold markup, quotes and ampersands.

// oddSuite is four WAC positions under ids a page must escape.
const oddSuite = `2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6; id "<script>alert(1)</script>";
8/7p/5k2/5p2/p1p2P2/Pr1pPK2/1P1R3P/8 b - - bm Rxb2; id "Tom & Jerry's <b>";
5rk1/1ppb3p/p1pb4/6q1/3P1p1r/2P1R2P/PP1BQ1P1/5RKN w - - bm Rg3; id "WAC.003";
r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - bm Nd5 a4; id "a'b <i>c</i>";
`

var oddEngines = []string{`<b>dev</b> & "co"`, "plain"}

// runOddJob submits the odd suite to a farm and waits for its end.
func runOddJob(t *testing.T) (*farmtest.Farm, string) {
	t.Helper()
	farm := farmtest.Start(t, 1)
	suite, err := epd.ParseSuite("odd <suite>.epd", []byte(oddSuite))
	if err != nil {
		t.Fatal(err)
	}
	var engines []*arbiterv1.EngineSpec
	for _, name := range oddEngines {
		engines = append(engines, &arbiterv1.EngineSpec{Name: name, Command: matchspec.Embedded, Protocol: "builtin"})
	}
	packed, err := anypb.New(epd.SpecOf(suite, engines, epd.Limit{Nodes: 3000}, 2))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := farm.Client(t)
	resp, err := c.Jobs.SubmitJob(ctx, &arbiterv1.SubmitJobRequest{Kind: epd.Kind, Spec: packed})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetJobId()
	final, err := c.WatchJob(ctx, id, clusterclient.Interactive, func(*arbiterv1.Job) {})
	if err != nil {
		t.Fatal(err)
	}
	if final.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		t.Fatalf("job %s ended %s: %s", id, final.GetState(), final.GetError())
	}
	return farm, id
}

// apiDetail is the job's detail object as the JSON API (the JobJSON of
// `arbiter status JOB --json`) serves it, raw and decoded.
func apiDetail(t *testing.T, farm *farmtest.Farm, path string) []json.RawMessage {
	t.Helper()
	status, body := farm.Do(t, "GET", path, nil)
	if status != 200 {
		t.Fatalf("GET %s: %d\n%s", path, status, body)
	}
	type jobDetail struct {
		Kind   string          `json:"kind"`
		Detail json.RawMessage `json:"detail"`
	}
	var doc struct {
		jobDetail
		Jobs []jobDetail `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	var out []json.RawMessage
	for _, j := range append(doc.Jobs, doc.jobDetail) {
		if j.Kind == epd.Kind {
			out = append(out, j.Detail)
		}
	}
	return out
}

// detailSchema compiles the kind's detail schema with docs/json's
// schemas it refers to.
func detailSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	files, _ := filepath.Glob("../../docs/json/*.schema.json")
	for _, f := range append(files, "detail.schema.json") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource(doc.(map[string]any)["$id"].(string), doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile("https://arbiter-chess.github.io/schemas/kinds/epd/detail.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEPDPageJSONAndBlock: for one finished job, (1) the JSON API's
// detail of the job and of the list match the kind's registered schema,
// and the job's carries every result and each engine's totals, whose
// counts equal the coordinator's; (2) the page's per-engine table and
// per-position table show exactly those figures, with the odd names and
// ids as text (parsed back equal) and never as markup; (3) the result
// block (the API's /block, as `arbiter status JOB --block` prints it)
// holds each engine's line. Controls: a job id of no EPD job is refused at
// /epd/; a detail with a result removed fails the schema's if/then (the
// schema can fail); the page's raw HTML holds no "<script>alert".
func TestEPDPageJSONAndBlock(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a farm")
	}
	farm, id := runOddJob(t)
	schema := detailSchema(t)
	full := apiDetail(t, farm, "/api/v1/jobs/"+id)
	list := apiDetail(t, farm, "/api/v1/jobs")
	if len(full) != 1 || len(list) != 1 {
		t.Fatalf("EPD details: %d of the job, %d in the list; want 1 and 1", len(full), len(list))
	}
	for _, raw := range append(full, list...) {
		validate(t, schema, raw)
	}
	var d epd.DetailJSON
	if err := json.Unmarshal(full[0], &d); err != nil {
		t.Fatal(err)
	}
	checkDetail(t, d)
	schemaCanFail(t, schema, full[0])

	status, page := farm.Do(t, "GET", "/epd/"+id, nil)
	if status != 200 {
		t.Fatalf("/epd/%s: %d\n%s", id, status, page)
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>dev</b>") {
		t.Errorf("/epd/%s shows a name or id as markup", id)
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	checkEngineTable(t, tableRows(doc, "epd-engines"), d)
	checkPositionTable(t, tableRows(doc, "epd-positions"), d)
	if !strings.Contains(page, `action="/jobs/`+id+`/follow`) {
		t.Errorf("/epd/%s has no Follow button", id)
	}
	checkBlock(t, farm, id, d)
	if status, _ := farm.Do(t, "GET", "/epd/pnosuchjob00", nil); status == 200 {
		t.Errorf("/epd/ of no EPD job: %d", status)
	}
}

func validate(t *testing.T, s *jsonschema.Schema, raw json.RawMessage) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err == nil {
		err = s.Validate(inst)
	}
	if err != nil {
		t.Errorf("the detail does not match detail.schema.json: %v\n%.2000s", err, raw)
	}
}

// checkDetail: every (engine, position) has its result, and each
// engine's totals agree with the coordinator's counts and the results.
func checkDetail(t *testing.T, d epd.DetailJSON) {
	t.Helper()
	if d.Positions != 4 || len(d.Results) != 4*len(oddEngines) || d.BatchesDone != d.Batches || d.Batches != 4 {
		t.Fatalf("detail: %d positions, %d results, %d of %d batches; want 4, %d, 4 of 4", d.Positions, len(d.Results), d.BatchesDone,
			d.Batches, 4*len(oddEngines))
	}
	for i, e := range d.Engines {
		solved := 0
		for _, r := range d.Results {
			if r.Engine == oddEngines[i] && r.Solved {
				solved++
			}
		}
		if e.Engine.Name != oddEngines[i] || e.Totals == nil || e.Totals.Solved != solved || int(e.Solved) != solved || e.Searched != 4 ||
			e.Totals.Searched != 4 {
			t.Errorf("engine %d: %+v totals %+v; want %q, 4 searched, %d solved", i, e, e.Totals, oddEngines[i], solved)
		}
	}
}

// schemaCanFail: a solved result without its solve time is refused.
func schemaCanFail(t *testing.T, s *jsonschema.Schema, raw json.RawMessage) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, r := range m["results"].([]any) {
		r := r.(map[string]any)
		if r["solved"] == true {
			delete(r, "solve_seconds")
			bad, _ := json.Marshal(m)
			inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(bad))
			if s.Validate(inst) == nil {
				t.Error("control: a solved result without solve_seconds passes detail.schema.json")
			}
			return
		}
	}
	t.Error("control: no position solved, so the schema's solved branch was not tried")
}

// tableRows is the text of each body row's cells of the table with id.
func tableRows(doc *html.Node, id string) [][]string {
	var table *html.Node
	var find func(n *html.Node)
	find = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "table" && attr(n, "id") == id {
			table = n
		}
		for c := n.FirstChild; c != nil && table == nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	var rows [][]string
	var walk func(n *html.Node, inBody bool)
	walk = func(n *html.Node, inBody bool) {
		if n.Type == html.ElementNode && n.Data == "tr" && inBody {
			var cells []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
					cells = append(cells, strings.Join(strings.Fields(text(c)), " "))
				}
			}
			rows = append(rows, cells)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody || (n.Type == html.ElementNode && n.Data == "tbody"))
		}
	}
	if table != nil {
		walk(table, false)
	}
	return rows
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
	}
	return b.String()
}

// checkEngineTable: one row per engine with the detail's totals.
func checkEngineTable(t *testing.T, rows [][]string, d epd.DetailJSON) {
	t.Helper()
	if len(rows) != len(d.Engines) {
		t.Fatalf("the engines' table has %d rows, want %d: %q", len(rows), len(d.Engines), rows)
	}
	for i, e := range d.Engines {
		tot := e.Totals
		timeCell, depthCell := "-", "-"
		if tot.Solved > 0 {
			timeCell, depthCell = fmt.Sprintf("%.3fs", tot.MeanSolveSeconds), fmt.Sprintf("%.1f", tot.MeanSolveDepth)
		}
		want := []string{tot.Name, fmt.Sprintf("%d/%d", tot.Solved, tot.Searched), fmt.Sprintf("%.1f%%", tot.SolvedPercent), timeCell,
			depthCell, fmt.Sprint(tot.Nodes), fmt.Sprint(tot.OnlySolver), fmt.Sprint(tot.Errors)}
		if strings.Join(rows[i], "|") != strings.Join(want, "|") {
			t.Errorf("engines' table row %d:\n got %q\nwant %q", i, rows[i], want)
		}
	}
}

// checkPositionTable: one row per position, its id as given, each
// engine's cell with its move and verdict from the detail's results.
func checkPositionTable(t *testing.T, rows [][]string, d epd.DetailJSON) {
	t.Helper()
	if len(rows) != d.Positions {
		t.Fatalf("the positions' table has %d rows, want %d: %q", len(rows), d.Positions, rows)
	}
	for _, r := range d.Results {
		engine := -1
		for i, name := range oddEngines {
			if name == r.Engine {
				engine = i
			}
		}
		var row []string
		for _, cells := range rows {
			if len(cells) == 3+len(oddEngines) && cells[0] == r.ID {
				row = cells
			}
		}
		if row == nil || engine < 0 {
			t.Errorf("no row for position %q (engine %q) in %q", r.ID, r.Engine, rows)
			continue
		}
		want := r.Move + " not solved"
		if r.Solved {
			want = fmt.Sprintf("%s solved at %.3fs depth %d", r.Move, *r.SolveSeconds, *r.SolveDepth)
		}
		if got := row[3+engine]; got != want {
			t.Errorf("position %q, engine %q: %q, want %q", r.ID, r.Engine, got, want)
		}
	}
}

// checkBlock: the block names the suite and has each engine's line.
func checkBlock(t *testing.T, farm *farmtest.Farm, id string, d epd.DetailJSON) {
	t.Helper()
	status, block := farm.Do(t, "GET", "/api/v1/jobs/"+id+"/block", nil)
	if status != 200 {
		t.Fatalf("block: %d\n%s", status, block)
	}
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if len(lines) != 3+len(d.Engines) || lines[0] != "EPD | odd <suite>.epd | nodes=3000 | 4 positions" {
		t.Fatalf("block:\n%s", block)
	}
	for i, e := range d.Engines {
		tot := e.Totals
		fields := strings.Split(lines[2+i], " | ")
		for k := range fields {
			fields[k] = strings.TrimSpace(fields[k])
		}
		want := []string{tot.Name, fmt.Sprintf("%d/%d", tot.Solved, tot.Searched), fmt.Sprintf("%.1f", tot.SolvedPercent), "-", "-"}
		if tot.Solved > 0 {
			want[3], want[4] = fmt.Sprintf("%.3fs", tot.MeanSolveSeconds), fmt.Sprintf("%.1f", tot.MeanSolveDepth)
		}
		if strings.Join(fields, "|") != strings.Join(want, "|") {
			t.Errorf("block line %d: %q, want %q", 2+i, fields, want)
		}
	}
}
