package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/httpapi"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

const schemaDir = "../../docs/json"
const schemaBase = "https://arbiter-chess.github.io/schemas/"

// TestOpenAPIValidates loads the served document with kin-openapi, the
// job schemas it names read from docs/json, and validates it.
func TestOpenAPIValidates(t *testing.T) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		name, ok := strings.CutPrefix(u.String(), schemaBase)
		if !ok {
			return nil, fmt.Errorf("%s: only the schemas of docs/json are read", u)
		}
		return os.ReadFile(filepath.Join(schemaDir, name))
	}
	doc, err := loader.LoadFromData(httpapi.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(doc.Paths.Map()) < 10 {
		t.Errorf("%d paths documented", len(doc.Paths.Map()))
	}
}

// checkModify: a running test is changed by its submitter, not by another
// client; the answer is the job after it; a finished test no longer
// changes.
func checkModify(t *testing.T, a *api, carol, dave, testID string, nodes *arbiterv1.TimeControl, opening []*arbiterv1.Opening) {
	t.Helper()
	long := a.call("POST", "/tests", "/tests", carol, &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "a", Command: "embedded", Protocol: "builtin"},
		EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded", Protocol: "builtin"},
		TimeControl: nodes, Games: 100000, BatchPairs: 1, Openings: opening, BookName: "e4"})
	expect(t, "submit a long test", long, 201, `"kind":"match"`)
	longID, _ := a.job(long)
	modify := func(id string) string { return "/jobs/" + id + "/modify" }
	expect(t, "dave tags carol's test", a.call("POST", "/jobs/{id}/modify", modify(longID), dave, []byte(`{"setTags": true, "tags": ["dave-was-here"]}`)), 403, `"code":"PERMISSION_DENIED"`)
	expect(t, "carol tags her test", a.call("POST", "/jobs/{id}/modify", modify(longID), carol, []byte(`{"setTags": true, "tags": ["api-tag"], "throughput": 2}`)), 200, `api-tag`)
	expect(t, "another job in the body", a.call("POST", "/jobs/{id}/modify", modify(longID), carol, []byte(`{"jobId": "s000000000000", "notes": "x"}`)), 400, "is not the path's job")
	expect(t, "nothing to change", a.call("POST", "/jobs/{id}/modify", modify(longID), carol, []byte(`{}`)), 400, "nothing to change")
	expect(t, "a finished test", a.call("POST", "/jobs/{id}/modify", modify(testID), carol, []byte(`{"notes": "late"}`)), 409, "already done")
	expect(t, "carol cancels the long test", a.call("POST", "/jobs/{id}/cancel", "/jobs/"+longID+"/cancel", carol, nil), 200, `"state":"cancelled"`)
}

// checkSubmitJob: a dataset through the last release's route, then
// cancelled; and one route for every kind, {"kind", "spec"}, the spec
// decoded into the kind's registered message. The controls: an unknown
// kind is refused with the list of kinds, a spec of another kind naming
// the kind's message, a worker by its role.
func checkSubmitJob(t *testing.T, a *api, carol, worker string) {
	t.Helper()
	// A dataset through the API, then cancelled.
	dg := a.call("POST", "/datagen", "/datagen", carol, &arbiterv1.DatagenSpec{Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded"},
		Positions: 100000, Nodes: 300, RandomPliesMin: 8, RandomPliesMax: 9, Seed: 1})
	expect(t, "submit datagen", dg, 201, `"kind":"datagen"`)
	dgID, _ := a.job(dg)
	expect(t, "bad datagen", a.call("POST", "/datagen", "/datagen", carol, []byte(`{"positions": "x"}`)), 400, "not a datagen job's spec")
	expect(t, "carol cancels the dataset", a.call("POST", "/jobs/{id}/cancel", "/jobs/"+dgID+"/cancel", carol, nil), 200, `"state":"cancelled"`)

	generic := a.call("POST", "/jobs", "/jobs", carol, []byte(`{"kind": "datagen", "spec": {"engine": {"name": "dev", "command": "embedded"},
		"positions": 100000, "nodes": 300, "randomPliesMin": 8, "randomPliesMax": 9, "seed": 2}}`))
	expect(t, "POST /jobs datagen", generic, 201, `"kind":"datagen"`)
	genID, _ := a.job(generic)
	expect(t, "POST /jobs perft", a.call("POST", "/jobs", "/jobs", carol, []byte(`{"kind": "perft", "spec": {"depth": 2}}`)), 201, `"kind":"perft"`)
	expect(t, "POST /jobs unknown kind", a.call("POST", "/jobs", "/jobs", carol, []byte(`{"kind": "nope", "spec": {}}`)), 400, `kind: \"nope\" is not a kind of job submitted with a spec (datagen, `)
	expect(t, "POST /jobs another kind's spec", a.call("POST", "/jobs", "/jobs", carol, []byte(`{"kind": "perft", "spec": {"positions": 3}}`)), 400, "not a perft job's spec (PerftSpec")
	expect(t, "POST /jobs no spec", a.call("POST", "/jobs", "/jobs", carol, []byte(`{"kind": "perft"}`)), 400, "spec: missing")
	expect(t, "POST /jobs stray field", a.call("POST", "/jobs", "/jobs", carol, []byte(`{"kind": "perft", "spec": {"depth": 2}, "depth": 3}`)), 400, "unknown field")
	expect(t, "POST /jobs as a worker", a.call("POST", "/jobs", "/jobs", worker, []byte(`{"kind": "perft", "spec": {"depth": 2}}`)), 403, `"reason":"WRONG_ROLE"`)
	expect(t, "carol cancels it", a.call("POST", "/jobs/{id}/cancel", "/jobs/"+genID+"/cancel", carol, nil), 200, `"state":"cancelled"`)
}

// api calls the JSON API and checks every answer against the document:
// the operation's response for the status (or its default) must exist,
// its content type be documented, and a JSON body validate against its
// schema. It records the operations called.
type api struct {
	t      *testing.T
	base   string
	doc    map[string]any
	schema *jsonschema.Compiler
	called map[string]bool
}

type answer struct {
	status int
	body   []byte
	ctype  string
}

func newAPI(t *testing.T, base string) *api {
	var doc map[string]any
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	entries, err := os.ReadDir(schemaDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		f, err := os.Open(filepath.Join(schemaDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(schemaBase+e.Name(), v); err != nil {
			t.Fatal(err)
		}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(httpapi.OpenAPI()))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("mem:///openapi.json", v); err != nil {
		t.Fatal(err)
	}
	return &api{t: t, base: base, doc: doc, schema: c, called: map[string]bool{}}
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// call makes a request: route is the documented path ("/jobs/{id}"),
// path the real one.
func (a *api) call(method, route, path, token string, body any) answer {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case proto.Message:
		j, err := protojson.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, a.base+httpapi.Prefix+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	ans := answer{status: resp.StatusCode, body: out, ctype: resp.Header.Get("Content-Type")}
	a.check(method, route, ans)
	return ans
}

func (a *api) check(method, route string, ans answer) {
	a.t.Helper()
	what := fmt.Sprintf("%s %s → %d", method, route, ans.status)
	op, ok := a.doc["paths"].(map[string]any)[route].(map[string]any)[strings.ToLower(method)].(map[string]any)
	if !ok {
		a.t.Errorf("%s: not documented", what)
		return
	}
	a.called[strings.ToLower(method)+" "+route] = true
	responses := op["responses"].(map[string]any)
	key := fmt.Sprint(ans.status)
	resp, ok := responses[key].(map[string]any)
	if !ok {
		key = "default"
		if resp, ok = responses[key].(map[string]any); !ok {
			a.t.Errorf("%s: no documented response", what)
			return
		}
	}
	ptr := "#/paths/" + pointerEscape(route) + "/" + strings.ToLower(method) + "/responses/" + key
	if ref, ok := resp["$ref"].(string); ok {
		ptr = ref
		resp = a.doc["components"].(map[string]any)["responses"].(map[string]any)[strings.TrimPrefix(ref, "#/components/responses/")].(map[string]any)
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(ans.body) != 0 {
			a.t.Errorf("%s: a body where none is documented: %s", what, ans.body)
		}
		return
	}
	ctype, _, _ := strings.Cut(ans.ctype, ";")
	if _, ok := content[ctype]; !ok {
		a.t.Errorf("%s: content type %q is not documented", what, ans.ctype)
		return
	}
	if ctype != "application/json" {
		return
	}
	s, err := a.schema.Compile("mem:///openapi.json" + ptr + "/content/" + pointerEscape(ctype) + "/schema")
	if err != nil {
		a.t.Fatalf("%s: schema: %v", what, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(ans.body))
	if err != nil {
		a.t.Errorf("%s: not JSON: %v: %s", what, err, ans.body)
		return
	}
	if err := s.Validate(v); err != nil {
		a.t.Errorf("%s: the answer does not match its schema: %v\n%s", what, err, ans.body)
	}
}

func (a *api) job(ans answer) (id, state string) {
	a.t.Helper()
	var j struct {
		JobID string `json:"job_id"`
		State string `json:"state"`
	}
	if err := json.Unmarshal(ans.body, &j); err != nil {
		a.t.Fatalf("not a job: %s", ans.body)
	}
	return j.JobID, j.State
}

func expect(t *testing.T, what string, got answer, status int, contains string) {
	t.Helper()
	if got.status != status || !strings.Contains(string(got.body), contains) {
		t.Errorf("%s: %d %s; want %d with %q", what, got.status, got.body, status, contains)
	}
}

// TestEveryEndpoint calls every documented operation of the API on a
// real cluster, with the answers checked against the document, and the
// refusals: no token, a worker's token, another client's job, bad bodies.
func TestEveryEndpoint(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "api-admin", HTTP: "127.0.0.1:0", API: httpapi.ForCoordinator}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c := cl.Server.Coordinator()
	ctx := context.Background()
	carol, err := c.Credentials.Create(ctx, identity.Bootstrap, "carol", identity.Client)
	if err != nil {
		t.Fatal(err)
	}
	dave, _ := c.Credentials.Create(ctx, identity.Bootstrap, "dave", identity.Client)
	worker, _ := c.Credentials.Create(ctx, identity.Bootstrap, "w", identity.Worker)
	a := newAPI(t, "http://"+cl.Server.HTTPAddr())

	doc := a.call("GET", "/openapi.json", "/openapi.json", "", nil)
	expect(t, "openapi.json", doc, 200, `"openapi": "3.1.0"`)

	// Submit: a perft job, a test and a tune, as carol.
	perft := a.call("POST", "/perft", "/perft", carol, &arbiterv1.PerftSpec{Depth: 3})
	expect(t, "submit perft", perft, 201, `"kind":"perft"`)
	opening := []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}}
	nodes := &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 200}}
	test := a.call("POST", "/tests", "/tests", carol, &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "a", Command: "embedded", Protocol: "builtin"},
		EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded", Protocol: "builtin"},
		TimeControl: nodes, Games: 4, BatchPairs: 1, Openings: opening, BookName: "e4",
		Sprt: &arbiterv1.SprtParams{Elo0: 0, Elo1: 50, Alpha: 0.05, Beta: 0.05, Model: "normalized"}})
	expect(t, "submit test", test, 201, `"kind":"sprt"`)
	testID, _ := a.job(test)
	tune := a.call("POST", "/tunes", "/tunes", carol, &arbiterv1.SpsaSpec{
		Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded"},
		Params: []*arbiterv1.SpsaParam{{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002}},
		Pairs:  1000, BatchPairs: 2, TimeControl: nodes, Openings: opening, BookName: "e4"})
	expect(t, "submit tune", tune, 201, `"kind":"spsa"`)
	tuneID, _ := a.job(tune)

	// Read.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, state := a.job(a.call("GET", "/jobs/{id}", "/jobs/"+testID, carol, nil)); state == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the test did not finish")
		}
	}
	expect(t, "list", a.call("GET", "/jobs", "/jobs?limit=10", carol, nil), 200, testID)
	list := a.call("GET", "/jobs", "/jobs?kind=spsa", dave, nil)
	expect(t, "list of a kind", list, 200, tuneID)
	if strings.Contains(string(list.body), testID) {
		t.Errorf("?kind=spsa lists the test: %s", list.body)
	}
	block := a.call("GET", "/jobs/{id}/block", "/jobs/"+testID+"/block?link=https://farm/t", carol, nil)
	if block.status != 200 || !regexp.MustCompile(`^Elo   \| .*\nSPRT  \| nodes=200 Threads=1\nLLR   \| .*\nGames \| N: 4 W: \d+ L: \d+ D: \d+\nPenta \| \[.*\]\nAny   \| .*\nhttps://farm/t\n$`).Match(block.body) {
		t.Errorf("block: %d %s", block.status, block.body)
	}
	expect(t, "fishtest block", a.call("GET", "/jobs/{id}/block", "/jobs/"+testID+"/block?style=fishtest", carol, nil), 200, "\nTotal: 4 W: ")
	expect(t, "bad block style", a.call("GET", "/jobs/{id}/block", "/jobs/"+testID+"/block?style=cutechess", carol, nil), 400, "want openbench or fishtest")
	pgn := a.call("GET", "/jobs/{id}/pgn", "/jobs/"+testID+"/pgn", carol, nil)
	if pgn.status != 200 || strings.Count(string(pgn.body), "[Event ") != 4 {
		t.Errorf("pgn: %d, %d games", pgn.status, strings.Count(string(pgn.body), "[Event "))
	}
	expect(t, "shards of a test", a.call("GET", "/jobs/{id}/shards", "/jobs/"+testID+"/shards", carol, nil), 404, "")
	expect(t, "unknown job", a.call("GET", "/jobs/{id}", "/jobs/s000000000000", carol, nil), 404, `"code":"NOT_FOUND"`)

	checkSubmitJob(t, a, carol, worker)

	checkModify(t, a, carol, dave, testID, nodes, opening)

	// Cancel: another client may not; the submitter may.
	expect(t, "dave cancels carol's tune", a.call("POST", "/jobs/{id}/cancel", "/jobs/"+tuneID+"/cancel", dave, nil), 403, `"code":"PERMISSION_DENIED"`)
	expect(t, "carol cancels her tune", a.call("POST", "/jobs/{id}/cancel", "/jobs/"+tuneID+"/cancel", carol, nil), 200, `"state":"cancelled"`)

	// Refusals: the same as over gRPC.
	expect(t, "no token", a.call("GET", "/jobs", "/jobs", "", nil), 401, `"code":"UNAUTHENTICATED"`)
	expect(t, "unknown token", a.call("GET", "/jobs", "/jobs", "nope", nil), 401, `"code":"UNAUTHENTICATED"`)
	expect(t, "a worker submits", a.call("POST", "/perft", "/perft", worker, &arbiterv1.PerftSpec{Depth: 3}), 403, `"reason":"WRONG_ROLE"`)
	expect(t, "a worker reads", a.call("GET", "/jobs", "/jobs", worker, nil), 403, "")
	expect(t, "bad body", a.call("POST", "/tests", "/tests", carol, []byte(`{"engineA": 3}`)), 400, "not a test's spec")
	expect(t, "bad spec", a.call("POST", "/perft", "/perft", carol, &arbiterv1.PerftSpec{Depth: 3, Fen: "not a fen"}), 400, `"code":"INVALID_ARGUMENT"`)
	expect(t, "bad limit", a.call("GET", "/jobs", "/jobs?limit=0", carol, nil), 400, "limit")

	// Webhooks.
	hook := a.call("POST", "/hooks", "/hooks", carol, httpapi.HookRequest{URL: "https://example.org/hook", Events: []string{"finished"}, Format: "slack"})
	expect(t, "add hook", hook, 201, `"secret":"`)
	var h httpapi.HookJSON
	json.Unmarshal(hook.body, &h)
	expect(t, "add loopback hook", a.call("POST", "/hooks", "/hooks", carol, httpapi.HookRequest{URL: "http://127.0.0.1:9/", Events: []string{"finished"}}), 400, "loopback")
	expect(t, "add farm hook as a client", a.call("POST", "/hooks", "/hooks", carol, httpapi.HookRequest{URL: "https://example.org/", Events: []string{"failed"}, Farm: true}), 403, "only admins")
	expect(t, "hook body with an unknown field", a.call("POST", "/hooks", "/hooks", carol, []byte(`{"url":"https://example.org/","events":["finished"],"secret":"mine"}`)), 400, "unknown field")
	hooks := a.call("GET", "/hooks", "/hooks", carol, nil)
	expect(t, "list hooks", hooks, 200, h.ID)
	if strings.Contains(string(hooks.body), h.Secret) {
		t.Error("the list shows the secret")
	}
	expect(t, "dave's hooks", a.call("GET", "/hooks", "/hooks", dave, nil), 200, `{"hooks":[]}`)
	expect(t, "deliveries", a.call("GET", "/hooks/{id}/deliveries", "/hooks/"+h.ID+"/deliveries", carol, nil), 200, `"deliveries":`)
	expect(t, "dave reads carol's deliveries", a.call("GET", "/hooks/{id}/deliveries", "/hooks/"+h.ID+"/deliveries", dave, nil), 404, "no such webhook")
	expect(t, "all deliveries", a.call("GET", "/deliveries", "/deliveries?limit=5", carol, nil), 200, `"deliveries":`)
	expect(t, "dave removes carol's hook", a.call("DELETE", "/hooks/{id}", "/hooks/"+h.ID, dave, nil), 404, "no such webhook")
	expect(t, "remove hook", a.call("DELETE", "/hooks/{id}", "/hooks/"+h.ID, carol, nil), 204, "")
	expect(t, "unknown route", a.call("GET", "/jobs", "/jobz", carol, nil), 404, "no such API route")

	// Every documented operation was called.
	for route, item := range a.doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			if !a.called[method+" "+route] {
				t.Errorf("%s %s: documented, not called", strings.ToUpper(method), route)
			}
		}
	}
}
