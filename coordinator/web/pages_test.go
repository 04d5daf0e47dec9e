package web

import (
	"bytes"
	"context"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/testview"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

const bookDir = "../../books"

// testSpec is an SPRT (or, with games > 0 and no SPRT, a match) of the
// builtin engine against a much weakened one at fixed nodes on the
// repository's UHO book.
func testSpec(t testing.TB, nodes uint64, games uint64, sprtOn bool) *arbiterv1.MatchSpec {
	t.Helper()
	book, err := match.LoadBook(match.BookOptions{Path: bookDir + "/uho-200.epd"})
	if err != nil {
		t.Fatal(err)
	}
	s := &arbiterv1.MatchSpec{
		EngineA: &arbiterv1.EngineSpec{Name: "default", Command: matchspec.Embedded, Protocol: "builtin"},
		// Pieces worth little more than pawns: far weaker, so the SPRT
		// decides in tens of games.
		EngineB: &arbiterv1.EngineSpec{Name: "weak", Command: matchspec.Embedded, Protocol: "builtin", Options: map[string]string{
			"PawnValueMG": "200", "PawnValueEG": "250", "KnightValueMG": "150", "KnightValueEG": "150", "BishopValueMG": "150",
			"BishopValueEG": "150", "RookValueMG": "250", "RookValueEG": "250", "QueenValueMG": "600", "QueenValueEG": "600", "UseNNUE": "false"}},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: nodes}},
		BookName:    "uho-200.epd", BookOrder: "random", Seed: 3, Games: games, BatchPairs: 2,
	}
	for _, o := range book.Openings {
		s.Openings = append(s.Openings, matchspec.OpeningToProto(o))
	}
	if sprtOn {
		s.Sprt = &arbiterv1.SprtParams{Elo0: 0, Elo1: 40, Model: "logistic"}
	}
	return s
}

// tuneSpec is an SPSA tune of two of the builtin engine's search margins
// at fixed nodes, pairs game pairs in batches of 2.
func tuneSpec(t testing.TB, nodes, pairs uint64) *arbiterv1.SpsaSpec {
	return &arbiterv1.SpsaSpec{
		Engine: &arbiterv1.EngineSpec{Name: "dev", Command: matchspec.Embedded},
		Params: []*arbiterv1.SpsaParam{{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002},
			{Name: "FutMargin", Start: 90, Min: 20, Max: 400, CEnd: 10, REnd: 0.002}},
		Pairs: pairs, BatchPairs: 2, TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: nodes}},
		Openings: testSpec(t, nodes, 0, true).Openings, BookName: "uho-200.epd", BookOrder: "random", Seed: 7,
	}
}

func (cl *cluster) carol() identity.Identity {
	return identity.Identity{Name: "carol", Role: identity.Client}
}

// Every page renders, for a reader without a credential too, and names
// what it shows; live streams answer with an update.
func TestPagesRender(t *testing.T) {
	cl := newCluster(t, clusterOpts{grafana: "http://grafana.example:3000/", books: bookDir})
	ctx := context.Background()
	perft, err := cl.c.Core.Create(ctx, cl.carol(), jobkind.Perft, &arbiterv1.PerftSpec{Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	test, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, testSpec(t, 1000, 0, true))
	if err != nil {
		t.Fatal(err)
	}
	tune, err := cl.c.Core.Create(ctx, cl.carol(), jobkind.SPSA, tuneSpec(t, 1000, 40))
	if err != nil {
		t.Fatal(err)
	}
	// A test of the tune's values against its start values, listed on
	// the tune's page; another tune has none.
	vspec := testSpec(t, 1000, 0, true)
	vspec.VerifiesTune = tune.ID
	verification, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, vspec)
	if err != nil {
		t.Fatal(err)
	}
	unverified, err := cl.c.Core.Create(ctx, cl.carol(), jobkind.SPSA, tuneSpec(t, 1000, 40))
	if err != nil {
		t.Fatal(err)
	}
	// Node odds: weak plays 2000 nodes a move, the test's default 1000.
	oddsSpec := testSpec(t, 1000, 0, true)
	oddsSpec.EngineB.TimeControl = &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 2000}}
	odds, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, oddsSpec)
	if err != nil {
		t.Fatal(err)
	}
	sum := &arbiterv1.VerifySessionSummary{Engine: "bug", Depth: 2, Positions: 1, Bugs: 1, Findings: 1}
	rep := &arbiterv1.VerifyPositionReport{Id: "p1", Fen: "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", Depth: 3, Status: "bug",
		Findings: []*arbiterv1.VerifyFinding{{RootFen: "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", Moves: []string{"a6a7", "e8d7"},
			Fen: "8/P2k4/8/8/8/8/8/4K3 w - - 1 2", Depth: 1, Missed: []*arbiterv1.VerifyMoveIssue{{Move: "a7a8n", Reason: "missing under-promotion to knight"}},
			Command: "arbiter verify --engine cmd=bug --fen '8/P2k4/8/8/8/8/8/4K3 w - - 1 2' --depth 1"}}}
	if _, err := verifyOf(cl.c).Report(ctx, cl.carol(), "s-0123456789", sum, 0, []*arbiterv1.VerifyPositionReport{rep}); err != nil {
		t.Fatal(err)
	}
	b := cl.browser(t)
	for _, p := range []struct {
		path string
		want []string
	}{
		{"/", []string{perft.ID, test.ID, tune.ID, "s-0123456789", "default vs weak", "nodes=1000", "Grafana dashboard",
			"http://grafana.example:3000/d/arbiter-overview/"}},
		{"/tests?kind=test&state=pending", []string{test.ID}},
		{"/?kind=spsa&state=pending&submitter=carol", []string{tune.ID, "SPSA tunes", "RFPMargin 75 (from 75), FutMargin 90 (from 90)",
			"nodes=1000", `<span data-field="updates">0</span>/<span data-field="batches_total">20</span>`, "pending"}},
		{"/tunes/" + tune.ID, []string{"Tune " + tune.ID + ": dev", "RFPMargin", "FutMargin", "uho-200.epd", "40 game pairs in batches of 2",
			`<span data-field="updates">0</span> of <span data-field="batches_total">20</span>`, "pending", "alpha 0.602, gamma 0.101, A ratio 0.1",
			`<td class="num" data-field="start" data-value="75">75</td>`, "The trajectories appear after the first update", "No worker has played this tune yet",
			`<tr data-test="` + verification.ID + `"><th scope="row"><a href="/tests/` + verification.ID + `">`,
			`<td data-field="state"><span class="state st-pending">pending</span></td>`, `<td class="num" data-field="games">0</td>`}},
		{"/tunes/" + unverified.ID, []string{"Result block", "SPSA  | nodes=1000 Threads=1\nIters | 0/20\n", `data-copy="block-fishtest"`, "/static/copy.js",
			"No verification yet: <code>arbiter spsa confirm " + unverified.ID}},
		{"/tests/" + test.ID, []string{"Engine A (under test)", "uho-200.epd", "no decision yet", "arbiter-sprt/?var-test=" + test.ID}},
		{"/tests/" + odds.ID, []string{"nodes=1000 vs nodes=2000 (reference nps"}},
		{"/?kind=test", []string{odds.ID, "<td>nodes=1000 vs nodes=2000</td>"}},
		{"/tests/" + test.ID + "/games", []string{"No games counted yet"}},
		{"/perft/" + perft.ID, []string{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "Published value", "8902", "Divide",
			`<strong class="warn" data-field="unverified">unverified: no unit was computed by a second identity</strong>`}},
		{"/verify/s-0123456789", []string{"missing under-promotion to knight", "a6a7 e8d7", "arbiter verify --engine cmd=bug", "role=\"img\""}},
		{"/workers", []string{"No worker has registered"}},
		{"/submit", []string{"Submitting needs a client or admin credential", "uho-200.epd", "8moves-200.pgn", `id="test-form"`, `id="perft-form"`}},
		{"/signin", []string{"Credential"}},
	} {
		r := b.get(p.path)
		if r.status != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", p.path, r.status, r.body)
			continue
		}
		for _, w := range p.want {
			if !strings.Contains(r.body, w) {
				t.Errorf("GET %s: no %q in the page", p.path, w)
			}
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: CSP %q", p.path, csp)
		}
	}
	// The tune is listed as a tune only: not among tests or perft jobs.
	for _, path := range []string{"/?kind=test", "/?kind=perft", "/?kind=verify"} {
		if r := b.get(path); r.status != http.StatusOK || strings.Contains(r.body, tune.ID) {
			t.Errorf("GET %s: %d, the tune listed: %v", path, r.status, strings.Contains(r.body, tune.ID))
		}
	}
	if body := b.get("/").body; !strings.Contains(body[strings.Index(body, `id="spsa"`)+1:], `<a href="/tunes/`+tune.ID+`">`) {
		t.Errorf("GET /: tune %s not linked in the SPSA table", tune.ID)
	}
	// The tests' and perft's tables are the kinds' sections (kinds/test and
	// kinds/perft register them): each lists its jobs, and both show
	// empty when the filter keeps none of theirs.
	front := b.get("/").body
	for _, c := range []struct{ table, link string }{{"tests", "/tests/" + test.ID}, {"perft", "/perft/" + perft.ID}} {
		if !strings.Contains(tableOf(front, c.table), `<a href="`+c.link+`">`) {
			t.Errorf("GET /: %s not linked in the table %q", c.link, c.table)
		}
	}
	if body := b.get("/?kind=spsa&state=pending&submitter=carol").body; !strings.Contains(body, "No tests match the filter.") ||
		!strings.Contains(body, "No perft jobs match the filter.") {
		t.Errorf("GET /?kind=spsa: the tests' and perft's tables not shown empty")
	}
	if r := b.get("/jobs/" + tune.ID); r.status != http.StatusSeeOther || r.location != "/tunes/"+tune.ID {
		t.Errorf("GET /jobs/%s: %d to %q", tune.ID, r.status, r.location)
	}
	// A live stream answers with the live region at once.
	for _, path := range []string{"/tests/" + test.ID, "/tunes/" + tune.ID} {
		got, ctype := firstLiveUpdate(t, cl.web.URL+path+"?live=1")
		if ctype != "text/event-stream" || !strings.Contains(got, "data: ") || !strings.Contains(got, `id="status"`) {
			t.Fatalf("live stream of %s: %s %q", path, ctype, got)
		}
	}
}

// firstLiveUpdate reads a live stream up to its first update.
func firstLiveUpdate(t *testing.T, u string) (events, contentType string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64<<10)
	n, err := resp.Body.Read(buf)
	got := string(buf[:n])
	for !strings.Contains(got, "event: update") && err == nil {
		n, err = resp.Body.Read(buf)
		got += string(buf[:n])
	}
	return got, resp.Header.Get("Content-Type")
}

// countJobs is the number of jobs the core holds.
func (cl *cluster) countJobs() int {
	snaps, _ := cl.c.Core.Jobs(1_000_000, nil)
	return len(snaps)
}

// Bad input from URLs and forms gets a page naming the problem with a 4xx
// status, and stores nothing.
func TestBadInput(t *testing.T) {
	cl := newCluster(t, clusterOpts{books: bookDir})
	ctx := context.Background()
	test, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, testSpec(t, 1000, 0, true))
	if err != nil {
		t.Fatal(err)
	}
	tune, err := cl.c.Core.Create(ctx, cl.carol(), jobkind.SPSA, tuneSpec(t, 1000, 40))
	if err != nil {
		t.Fatal(err)
	}
	workerTok, err := cl.c.Credentials.Create(ctx, identity.Bootstrap, "wk", identity.Worker)
	if err != nil {
		t.Fatal(err)
	}
	otherTok, err := cl.c.Credentials.Create(ctx, identity.Bootstrap, "dave", identity.Client)
	if err != nil {
		t.Fatal(err)
	}
	anon := cl.browser(t)
	carol := cl.browser(t)
	carol.signIn(cl.client)
	dave := cl.browser(t)
	dave.signIn(otherTok)
	goodTest := url.Values{"kind": {"sprt"}, "engine_a": {"name=a,builtin"}, "engine_b": {"name=b,builtin"}, "each": {"nodes=500"},
		"book": {"uho-200.epd"}, "elo0": {"0"}, "elo1": {"5"}, "model": {"normalized"}}
	with := func(base url.Values, kv ...string) url.Values {
		v := url.Values{}
		for k, x := range base {
			v[k] = x
		}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	perft := url.Values{"fen": {"8/8/8/8/8/8/8/K6k w - - 0 1"}, "depth": {"3"}}
	before := cl.countJobs()
	cases := []struct {
		name   string
		b      *browser
		method string
		path   string
		form   url.Values
		csrf   bool
		status int
		want   string
	}{
		{"unknown test", anon, "GET", "/tests/s000000000000", nil, false, 404, "unknown job"},
		{"unknown perft job", anon, "GET", "/perft/pnope", nil, false, 404, "unknown job"},
		{"test as perft", anon, "GET", "/perft/" + test.ID, nil, false, 404, "is not a perft job"},
		{"test as tune", anon, "GET", "/tunes/" + test.ID, nil, false, 404, "is not an SPSA tune"},
		{"tune as test", anon, "GET", "/tests/" + tune.ID, nil, false, 404, "is not a match or SPRT test (its page: /jobs/" + tune.ID + ")"},
		{"unknown tune", anon, "GET", "/tunes/snope", nil, false, 404, "unknown job"},
		{"tune's priority", carol, "POST", "/jobs/" + tune.ID + "/priority", url.Values{"priority": {"1"}, "throughput": {"1"}}, true, 409, "its priority cannot change"},
		{"cancel another's tune", dave, "POST", "/jobs/" + tune.ID + "/cancel", url.Values{}, true, 403, "only its submitter, an approver or an admin"},
		{"unknown verify session", anon, "GET", "/verify/s-nothing-here", nil, false, 404, "unknown verify session"},
		{"unknown page", anon, "GET", "/nowhere", nil, false, 404, "is not a page"},
		{"bad state filter", anon, "GET", "/tests?state=sleeping", nil, false, 400, "state \"sleeping\""},
		{"bad page number", anon, "GET", "/?page=0", nil, false, 400, "page \"0\""},
		{"bad game", anon, "GET", "/tests/" + test.ID + "/games/x/1", nil, false, 400, "batch \"x\""},
		{"missing game", anon, "GET", "/tests/" + test.ID + "/games/0/1", nil, false, 404, "no game 1 in batch 0"},
		{"no CSRF token", carol, "POST", "/submit/perft", perft, false, 403, "no CSRF token"},
		{"bad CSRF token", carol, "POST", "/submit/perft", with(perft, "csrf", "forged"), false, 403, "does not match"},
		{"no credential", anon, "POST", "/submit/perft", perft, true, 401, "No credential"},
		{"bad FEN", carol, "POST", "/submit/perft", with(perft, "fen", "8/8/8/8/8/8/8/K6 w - - 0 1"), true, 400, "invalid FEN"},
		{"bad depth", carol, "POST", "/submit/perft", with(perft, "depth", "99"), true, 400, "depth \"99\""},
		{"bad tc", carol, "POST", "/submit/test", with(goodTest, "each", "tc=fast"), true, 400, "time control"},
		{"no tc", carol, "POST", "/submit/test", with(goodTest, "each", "option.Hash=16"), true, 400, "time control"},
		{"bad engine", carol, "POST", "/submit/test", with(goodTest, "engine_a", "name=a,warp=9"), true, 400, "engine A"},
		{"bad option", carol, "POST", "/submit/test", with(goodTest, "engine_a", "name=a,builtin,option.NoSuchOption=1"), true, 400, "NoSuchOption"},
		{"bad SPRT", carol, "POST", "/submit/test", with(goodTest, "elo1", "-5"), true, 400, "SPRT"},
		{"odd games", carol, "POST", "/submit/test", with(goodTest, "kind", "match", "games", "7"), true, 400, "games: 7 is odd"},
		{"unknown book", carol, "POST", "/submit/test", with(goodTest, "book", "../../etc/passwd"), true, 400, "not one of the coordinator's books"},
		{"cancel unknown", carol, "POST", "/jobs/pnope/cancel", url.Values{}, true, 404, "unknown job"},
		{"cancel another's", dave, "POST", "/jobs/" + test.ID + "/cancel", url.Values{}, true, 403, "only its submitter, an approver or an admin"},
		{"bad priority", carol, "POST", "/jobs/" + test.ID + "/priority", url.Values{"priority": {"5000"}, "throughput": {"1"}}, true, 400, "priority \"5000\""},
		{"zero share", carol, "POST", "/jobs/" + test.ID + "/priority", url.Values{"priority": {"1"}, "throughput": {"0"}}, true, 400, "must be above 0"},
		{"wrong token", anon, "POST", "/signin", url.Values{"token": {"arb_nope"}}, true, 401, "Unknown or revoked credential"},
		{"worker token", anon, "POST", "/signin", url.Values{"token": {workerTok}}, true, 403, "has role worker"},
		{"empty token", anon, "POST", "/signin", url.Values{"token": {""}}, true, 400, "empty"},
	}
	for _, c := range cases {
		var r response
		if c.method == "GET" {
			r = c.b.get(c.path)
		} else {
			form := c.form
			if c.csrf {
				form = with(c.form, "csrf", c.b.csrf())
			}
			r = c.b.post(c.path, form)
		}
		if r.status != c.status || !strings.Contains(html.UnescapeString(r.body), c.want) {
			t.Errorf("%s: %s %s: %d, want %d with %q\n%s", c.name, c.method, c.path, r.status, c.status, c.want, excerpt(r.body))
		}
		if !strings.Contains(r.body, `role="alert"`) && r.status >= 400 {
			t.Errorf("%s: the error page has no alert", c.name)
		}
	}
	if n := cl.countJobs(); n != before {
		t.Fatalf("%d jobs after refused submissions, %d before", n, before)
	}
	if j := cl.job(t, cl.dial(t, cl.client), test.ID); j.GetMatch().GetPriority() != 0 || j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("refused changes changed the test: %v", j)
	}
	// A cross-origin form is refused even with a valid token.
	tok := carol.csrf()
	req, _ := http.NewRequest("POST", cl.web.URL+withCSRF("/submit/perft", tok), strings.NewReader(with(perft, "csrf", tok).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	if r := carol.do(req); r.status != 403 || !strings.Contains(r.body, "another site") {
		t.Fatalf("cross-origin form: %d %s", r.status, excerpt(r.body))
	}
	// The same forms, well formed, do their work.
	if r := carol.post("/submit/perft", with(perft, "csrf", carol.csrf())); r.status != 303 || !strings.HasPrefix(r.location, "/perft/p") {
		t.Fatalf("good perft: %d %s", r.status, excerpt(r.body))
	}
	if r := carol.post("/jobs/"+test.ID+"/priority", url.Values{"csrf": {carol.csrf()}, "priority": {"3"}, "throughput": {"2.5"}}); r.status != 303 {
		t.Fatalf("good priority: %d %s", r.status, excerpt(r.body))
	}
	if m := cl.job(t, cl.dial(t, cl.client), test.ID).GetMatch(); m.GetPriority() != 3 || m.GetThroughput() != 2.5 {
		t.Fatalf("priority after the form: %v", m)
	}
	// A tune's submitter may cancel it from its page, not change its
	// priority (the tune workload has no SetPriority); others see neither.
	page := carol.get("/tunes/" + tune.ID).body
	if !strings.Contains(page, `action="/jobs/`+tune.ID+`/cancel?csrf=`) || strings.Contains(page, `/priority?csrf=`) {
		t.Errorf("tune page for its submitter: cancel form %v, priority form %v", strings.Contains(page, "/cancel?csrf="), strings.Contains(page, "/priority?csrf="))
	}
	if page := dave.get("/tunes/" + tune.ID).body; strings.Contains(page, `/cancel?csrf=`) {
		t.Error("tune page offers another client the cancel form")
	}
	if r := carol.post("/jobs/"+tune.ID+"/cancel", url.Values{"csrf": {carol.csrf()}}); r.status != 303 || r.location != "/tunes/"+tune.ID {
		t.Fatalf("cancel the tune: %d to %q %s", r.status, r.location, excerpt(r.body))
	}
	if j := cl.job(t, cl.dial(t, cl.client), tune.ID); j.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || !strings.Contains(j.GetError(), "cancelled by carol") {
		t.Fatalf("tune after the cancel form: %v %q", j.GetState(), j.GetError())
	}
	if page := carol.get("/tunes/" + tune.ID).body; !strings.Contains(page, "cancelled by carol") || strings.Contains(page, `/cancel?csrf=`) {
		t.Errorf("tune page after cancel: %s", excerpt(page))
	}
	// Signing out drops the credential.
	if r := carol.post("/signout", url.Values{"csrf": {carol.csrf()}}); r.status != 303 {
		t.Fatalf("sign out: %d", r.status)
	}
	if r := carol.post("/submit/perft", with(perft, "csrf", carol.csrf())); r.status != 401 {
		t.Fatalf("after signing out: %d", r.status)
	}
}

// With anonymous reading off every page needs a credential; the sign-in
// page does not.
func TestRequireSignIn(t *testing.T) {
	cl := newCluster(t, clusterOpts{requireSignIn: true})
	b := cl.browser(t)
	for _, p := range []string{"/", "/workers", "/tests/x", "/tests/x/pgn", "/?live=1"} {
		if r := b.get(p); r.status != http.StatusUnauthorized || !strings.Contains(r.body, "need a credential") {
			t.Errorf("anonymous GET %s: %d", p, r.status)
		}
	}
	if r := b.get("/signin"); r.status != 200 {
		t.Fatalf("sign-in page: %d", r.status)
	}
	if r := b.get("/static/style.css"); r.status != 200 {
		t.Fatalf("style sheet: %d", r.status)
	}
	b.signIn(cl.client)
	if r := b.get("/workers"); r.status != 200 {
		t.Fatalf("signed in: %d", r.status)
	}
	// A revoked credential reads no more.
	if err := cl.c.Credentials.Revoke(context.Background(), identity.Bootstrap, "carol"); err != nil {
		t.Fatal(err)
	}
	if r := b.get("/workers"); r.status != http.StatusUnauthorized {
		t.Fatalf("revoked: %d", r.status)
	}
}

func excerpt(s string) string {
	if i := strings.Index(s, `role="alert"`); i >= 0 {
		s = s[i:]
	}
	if len(s) > 400 {
		s = s[:400]
	}
	return s
}

// Live streams are bounded in number, and Close ends them.
func TestLiveStreamsBoundedAndClosed(t *testing.T) {
	cl := newCluster(t, clusterOpts{})
	c := cl.c
	srv, err := New(context.Background(), Config{Core: c.Core, Games: c.Games(), Credentials: c.Credentials,
		MaxLiveStreams: 1, LiveInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/workers?live=1")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first stream: %v %v", resp.StatusCode, err)
	}
	defer resp.Body.Close()
	second, err := http.Get(ts.URL + "/?live=1")
	if err != nil {
		t.Fatal(err)
	}
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second stream: %d, want 503", second.StatusCode)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		ended <- err
	}()
	srv.Close()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("stream ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end on Close")
	}
}

// A book uploaded with the form is read (EPD or PGN, by its name) and the
// test starts with it; a file of another kind is refused by name.
func TestUploadBook(t *testing.T) {
	cl := newCluster(t, clusterOpts{})
	b := cl.browser(t)
	b.signIn(cl.client)
	send := func(name, content string) response {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		tok := b.csrf()
		for k, v := range map[string]string{"csrf": tok, "kind": "match", "engine_a": "name=a,builtin", "engine_b": "name=b,builtin",
			"each": "nodes=300", "games": "4", "book_order": "sequential"} {
			mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile("book_file", name)
		io.WriteString(fw, content)
		mw.Close()
		req, _ := http.NewRequest("POST", cl.web.URL+withCSRF("/submit/test", tok), &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return b.do(req)
	}
	before := cl.countJobs()
	if r := send("notes.txt", "hello"); r.status != 400 || !strings.Contains(html.UnescapeString(r.body), `book file "notes.txt": want an .epd, .pgn or .zip file`) {
		t.Fatalf("text file: %d %s", r.status, excerpt(r.body))
	}
	if r := send("bad.epd", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq\nnot a position\n"); r.status != 400 ||
		!strings.Contains(html.UnescapeString(r.body), "bad.epd") || strings.Contains(r.body, "arbiter-book-") {
		t.Fatalf("bad EPD: %d %s", r.status, excerpt(r.body))
	}
	if n := cl.countJobs(); n != before {
		t.Fatalf("refused uploads stored %d jobs", n-before)
	}
	r := send("mine.pgn", "[Event \"o\"]\n\n1. e4 e5 2. Nf3 *\n\n[Event \"o\"]\n\n1. d4 d5 *\n")
	if r.status != 303 || !strings.HasPrefix(r.location, "/tests/s") {
		t.Fatalf("good PGN book: %d %s", r.status, excerpt(r.body))
	}
	j := cl.job(t, cl.dial(t, cl.client), strings.TrimPrefix(r.location, "/tests/"))
	if j.GetMatch().GetBookName() != "mine.pgn" || j.GetMatch().GetOpeningsCount() != 2 || j.GetSubmitter() != "carol" {
		t.Fatalf("test from the uploaded book: %v", j.GetMatch())
	}
}

// tableOf is the table of id in a page ("" when it has none).
func tableOf(body, id string) string {
	i := strings.Index(body, `<table id="`+id+`">`)
	if i < 0 {
		return ""
	}
	end := strings.Index(body[i:], "</table>")
	if end < 0 {
		return body[i:]
	}
	return body[i : i+end]
}
