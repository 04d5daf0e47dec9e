package web

// The pages in a real headless Chromium, driven with chromedp, against a
// running coordinator (gRPC on loopback, real workers of their own
// identities, a real SQLite store) that runs a real SPRT (the builtin
// engine against a weakened builtin at fixed nodes), a perft job and an
// SPSA tune (a verify session's page is read by kinds/verify's
// TestVerifyPageInABrowser):
//   - every page loads with no console error and passes the accessibility
//     check of headless.A11yScript (labels on form fields, text
//     alternatives for images and pictures, text contrast);
//   - the numbers on the pages equal the gRPC snapshots of the same
//     objects (what arbiter status --json prints);
//   - an SPRT submitted from the form starts and appears in the list; its
//     page updates live without a reload; its priority and throughput
//     change while it runs and it is stopped from the page, which then
//     says the SPRT was stopped by hand; it is rescheduled (both pages
//     link the copy) and found by tag and by user.
// Screenshots of each page are written to $ARBITER_SCREENSHOTS (or a
// temporary directory); with ARBITER_DOCS_IMAGES=1 two are also written to
// docs/images/ for the README.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/headless"
)

const chromiumPath = headless.Chromium

// a11yScript is the shared accessibility check (headless.A11yScript).
const a11yScript = headless.A11yScript

// chrome is a tab of a real headless Chromium (testing/headless) on the
// pages under test, with the screenshots of the pages it visits.
type chrome struct {
	*headless.Tab
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
}

func newChrome(t *testing.T, base, shots string) *chrome {
	t.Helper()
	ctx := headless.Start(t, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 900))
	return &chrome{Tab: headless.NewTab(t, ctx, base), t: t, ctx: ctx, base: base, shots: shots}
}

// run runs actions with a time limit.
func (c *chrome) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
}

// navigate runs actions that leave the page (a click, a form) and waits
// until the next page has loaded: the marker set on this page is gone.
func (c *chrome) navigate(what string, actions ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	eval[bool](c, `window.__leaving = true; true`)
	c.do(what, actions...)
	deadline := time.Now().Add(60 * time.Second)
	for {
		// Errors are expected while the old page goes away.
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__leaving === undefined && document.readyState === "complete" && !!document.querySelector("footer.foot")`))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: no new page after 60s (%v)", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func eval[T any](c *chrome, js string) T {
	c.t.Helper()
	return headless.Eval[T](c.Tab, js)
}

// consoleErrors returns and forgets the console errors seen so far.
func (c *chrome) consoleErrors() []string { return c.ConsoleErrors() }

// visit loads a page and checks it (headless.Tab.Visit: loaded, no
// console error, the accessibility basics); its screenshot is saved
// under name.
func (c *chrome) visit(path, name string) {
	c.t.Helper()
	c.Visit(path)
	if name != "" {
		c.screenshot(name)
	}
}

func (c *chrome) screenshot(name string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		c.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(c.shots, name+".png"), png, 0o644); err != nil {
		c.t.Fatal(err)
	}
	if os.Getenv("ARBITER_DOCS_IMAGES") == "1" && (name == "list" || name == "test") {
		if err := os.WriteFile(filepath.Join("../../docs/images", "web-"+name+".png"), png, 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
}

// fields returns the data-field values under sel.
func (c *chrome) fields(sel string) map[string]string {
	c.t.Helper()
	return c.Fields(sel)
}

// same reports the fields of a page that differ from want.
func same(t *testing.T, where string, got, want map[string]string) {
	t.Helper()
	headless.Same(t, where, got, want, "the gRPC snapshot")
}

func f2(x float64) string { return fixed(x, 2) }
func u(x uint64) string   { return strconv.FormatUint(x, 10) }

func pentaOf(p *arbiterv1.Pentanomial) string {
	return fmt.Sprintf("%d, %d, %d, %d, %d", p.GetLl(), p.GetLd(), p.GetDd(), p.GetWd(), p.GetWw())
}

func TestBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("no " + chromiumPath + " (Debian package chromium)")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	shots := os.Getenv("ARBITER_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	cl := newCluster(t, clusterOpts{books: bookDir, grafana: "http://127.0.0.1:3000"})
	cl.startWorker(t, "w1")
	cl.startWorker(t, "w2")
	grpcClient := cl.dial(t, cl.client)
	ctx := context.Background()

	// The work: a real SPRT to its decision, a perft job with
	// verification, a tune.
	sub, err := grpcClient.Jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: testSpec(t, 500, 0, true)})
	if err != nil {
		t.Fatal(err)
	}
	sprtID := sub.GetJob().GetJobId()
	perft, err := grpcClient.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 5, VerifyFraction: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	perftID := perft.GetJob().GetJobId()
	tune, err := grpcClient.Jobs.SubmitSpsa(ctx, &arbiterv1.SubmitSpsaRequest{Spec: tuneSpec(t, 500, 6)})
	if err != nil {
		t.Fatal(err)
	}
	tuneID := tune.GetJob().GetJobId()
	done := func(j *arbiterv1.Job) bool { return j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING }
	perftJob := cl.waitJob(t, grpcClient, perftID, 2*time.Minute, "done", done)
	sprtJob := cl.waitJob(t, grpcClient, sprtID, 4*time.Minute, "decided", done)
	tuneJob := cl.waitJob(t, grpcClient, tuneID, 2*time.Minute, "done", done)
	t.Logf("SPRT %s: %s after %d games (LLR %.2f); perft %s: %s nodes", sprtID, sprtJob.GetMatchProgress().GetSprtState(),
		sprtJob.GetMatchProgress().GetGames(), sprtJob.GetMatchProgress().GetLlr(), perftID, perftJob.GetNodes())
	if sprtJob.GetState() != arbiterv1.JobState_JOB_STATE_DONE || perftJob.GetNodes() != "4865609" {
		t.Fatalf("work did not finish as it should: SPRT %v, perft %v %s", sprtJob.GetState(), perftJob.GetState(), perftJob.GetNodes())
	}
	statusJSON, _ := protojson.Marshal(sprtJob) // what arbiter status --json prints
	t.Logf("arbiter status --json %s: %.300s...", sprtID, statusJSON)

	w := &browserWork{cl: cl, grpc: grpcClient, sprt: sprtJob, perft: perftJob, tune: tuneJob, shots: shots}
	c := newChrome(t, cl.web.URL, shots)
	browseListAndTune(t, c, w)
	browseTestPerftWorkers(t, c, w)
	browseSignedIn(t, c, w)
}

// browserWork is the finished work TestBrowser reads on the pages, with
// the cluster that did it.
type browserWork struct {
	cl                *cluster
	grpc              *clusterclient.Client
	sprt, perft, tune *arbiterv1.Job
	shots             string
}

// browseListAndTune reads the list and the tune's page anonymously.
func browseListAndTune(t *testing.T, c *chrome, w *browserWork) {
	sprtID, perftID, tuneID := w.sprt.GetJobId(), w.perft.GetJobId(), w.tune.GetJobId()
	sprtJob, perftJob, tuneJob := w.sprt, w.perft, w.tune

	// ---- every page, read anonymously ----
	c.visit("/", "list")
	mp := sprtJob.GetMatchProgress()
	same(t, "list, test row", c.fields(`tr[data-job="`+sprtID+`"]`), map[string]string{
		"games": u(mp.GetGames()), "wins": u(mp.GetWins()), "draws": u(mp.GetDraws()), "losses": u(mp.GetLosses()),
		"penta": pentaOf(mp.GetPentanomial()), "llr": f2(mp.GetLlr()), "elo": fixed(mp.GetElo(), 1), "state": "done"})
	pp := perftJob.GetProgress()
	same(t, "list, perft row", c.fields(`tr[data-job="`+perftID+`"]`), map[string]string{
		"depth": "5", "units_done": u(pp.GetUnitsDone()), "units_total": u(pp.GetUnitsTotal()), "nodes": perftJob.GetNodes(),
		"units_verified": u(pp.GetUnitsVerified()), "state": "done"})
	sp := tuneJob.GetSpsaProgress()
	same(t, "list, SPSA row", c.fields(`tr[data-job="`+tuneID+`"]`), map[string]string{
		"updates": u(sp.GetUpdates()), "batches_total": u(sp.GetBatchesTotal()), "games": u(sp.GetGames()), "wins": u(sp.GetWins()),
		"draws": u(sp.GetDraws()), "losses": u(sp.GetLosses()), "state": "done"})
	if sp.GetUpdates() != 3 || sp.GetGames() != 12 {
		t.Errorf("tune %s: %d updates, %d games; want 3 and 12", tuneID, sp.GetUpdates(), sp.GetGames())
	}

	c.visit("/tunes/"+tuneID, "tune")
	same(t, "tune page", c.fields("#status"), map[string]string{
		"state": "done", "updates": u(sp.GetUpdates()), "batches_total": u(sp.GetBatchesTotal()), "pairs_done": u(sp.GetPairsDone()),
		"batches_leased": u(sp.GetBatchesLeased()), "active_workers": u(uint64(tuneJob.GetProgress().GetActiveWorkers())),
		"games": u(sp.GetGames()), "pgns": u(sp.GetPgns()), "wins": u(sp.GetWins()), "draws": u(sp.GetDraws()), "losses": u(sp.GetLosses()),
		"penta": pentaOf(sp.GetPentanomial()), "priority": fmt.Sprint(tuneJob.GetSpsa().GetPriority()),
		"throughput": fmt.Sprint(tuneJob.GetSpsa().GetThroughput())})
	for i, p := range sp.GetParams() {
		ck, rk := p.GetC(), p.GetR()
		same(t, "tune page, "+p.GetName(), c.fields(`#params tr[data-param="`+p.GetName()+`"]`), map[string]string{
			"start": exact(p.GetStart()), "current": exact(p.GetCurrent()), "engine": fmt.Sprint(math.Round(p.GetCurrent())),
			"min": exact(p.GetMin()), "max": exact(p.GetMax()), "c": exact(ck), "a": exact(rk * ck * ck), "r": exact(rk),
			"c_end": exact(p.GetCEnd()), "r_end": exact(p.GetREnd())})
		traj := p.GetTrajectory()
		if len(traj) != len(sp.GetTrajectoryUpdates()) || traj[len(traj)-1] != p.GetCurrent() || p.GetCurrent() == p.GetStart() {
			t.Errorf("tune %s, %s: trajectory %v at %v, now %v from %v: not a trajectory that moved", tuneID, p.GetName(), traj,
				sp.GetTrajectoryUpdates(), p.GetCurrent(), p.GetStart())
		}
		desc := eval[string](c, fmt.Sprintf(`document.getElementById('traj%d-d').textContent`, i))
		if want := fmt.Sprintf("to %s after %d updates", ParamValue(p, p.GetCurrent()), sp.GetUpdates()); !strings.Contains(desc, want) {
			t.Errorf("tune page, %s chart: %q, want %q", p.GetName(), desc, want)
		}
		pts := eval[int](c, fmt.Sprintf(`document.querySelector('#traj%d-t').parentElement.querySelector('polyline').getAttribute('points').trim().split(/\s+/).length`, i))
		if pts != len(traj) {
			t.Errorf("tune page, %s chart: %d points, the snapshot's trajectory has %d", p.GetName(), pts, len(traj))
		}
	}
	if n := eval[int](c, `document.querySelectorAll('svg.chart').length`); n != len(sp.GetParams()) {
		t.Errorf("tune page: %d charts for %d parameters", n, len(sp.GetParams()))
	}
	for _, w := range sp.GetWorkers() {
		same(t, "tune page, worker "+w.GetWorkerId(), c.fields(`#tune-workers tr[data-worker="`+w.GetWorkerId()+`"]`), map[string]string{
			"games": u(w.GetGames()), "time_scale": f2(w.GetTimeScale()), "bench_nps": strings.Join(splitThousands(w.GetBenchNps()), " ")})
	}
	if len(sp.GetWorkers()) == 0 {
		t.Errorf("tune %s: no workers in its snapshot", tuneID)
	}
}

// browseTestPerftWorkers reads the test's page, its games, the perft
// job's page and the workers' anonymously, and checks that the checks
// themselves see planted problems.
func browseTestPerftWorkers(t *testing.T, c *chrome, w *browserWork) {
	sprtID, perftID := w.sprt.GetJobId(), w.perft.GetJobId()
	sprtJob, perftJob := w.sprt, w.perft
	cl, grpcClient, ctx := w.cl, w.grpc, context.Background()
	mp, pp := sprtJob.GetMatchProgress(), perftJob.GetProgress()
	c.visit("/tests/"+sprtID, "test")
	same(t, "test page", c.fields("#status"), map[string]string{
		"state": "done", "games": u(mp.GetGames()), "pgns": u(mp.GetPgns()), "wins": u(mp.GetWins()), "draws": u(mp.GetDraws()),
		"losses": u(mp.GetLosses()), "penta": pentaOf(mp.GetPentanomial()), "elo": f2(mp.GetElo()), "elo_ci_low": f2(mp.GetEloCiLow()),
		"elo_ci_high": f2(mp.GetEloCiHigh()), "llr": f2(mp.GetLlr()), "lower_bound": f2(mp.GetLowerBound()),
		"upper_bound": f2(mp.GetUpperBound()), "sprt_verdict": "H1 accepted", "batches_done": u(mp.GetBatchesDone()),
		"batches_leased": u(mp.GetBatchesLeased()), "priority": "0", "throughput": "1"})
	for _, w := range mp.GetWorkers() {
		same(t, "test page, worker "+w.GetWorkerId(), c.fields(`#test-workers tr[data-worker="`+w.GetWorkerId()+`"]`), map[string]string{
			"games": u(w.GetGames()), "time_scale": f2(w.GetTimeScale()), "bench_nps": strings.Join(splitThousands(w.GetBenchNps()), " ")})
	}
	if n := eval[int](c, `document.querySelectorAll('svg.chart').length`); n != 2 {
		t.Errorf("test page: %d charts, want the LLR and the Elo chart", n)
	}
	// The result block, as arbiter status --block prints it, with the
	// page's address; the copy button puts it on the clipboard.
	for style, id := range map[jobreport.BlockStyle]string{jobreport.BlockOpenBench: "block-openbench", jobreport.BlockFishtest: "block-fishtest"} {
		want := jobreport.Block(sprtJob, style, cl.web.URL+"/tests/"+sprtID)
		if got := eval[string](c, `document.getElementById('`+id+`').textContent`); got != want {
			t.Errorf("test page, %s block:\n%s\nwant\n%s", style, got, want)
		}
	}
	c.do("copy the block", chromedp.Click(chromedp.CSS(`button[data-copy="block-openbench"]`)))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := eval[string](c, `document.querySelector('button[data-copy="block-openbench"]').textContent`)
		if got == "Copied" || strings.HasPrefix(got, "Copy failed") { // a headless browser may refuse the clipboard
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("test page: the copy button still says %q after a click", got)
			break
		}
	}
	c.visit("/tests/"+sprtID+"/games", "games")
	c.visit("/tests/"+sprtID+"/games/0/1", "game")
	if n := eval[int](c, `document.querySelectorAll('.moves a').length`); n < 10 {
		t.Errorf("game viewer: %d moves listed", n)
	}
	c.navigate("step back a move", chromedp.Click(chromedp.CSS(`a[rel="prev"]`)))
	if loc := eval[string](c, "location.search"); !strings.HasPrefix(loc, "?ply=") {
		t.Errorf("game viewer: stepping back went to %q", loc)
	}

	c.visit("/perft/"+perftID, "perft")
	same(t, "perft page", c.fields("#status"), map[string]string{
		"state": "done", "units_done": u(pp.GetUnitsDone()), "units_total": u(pp.GetUnitsTotal()), "positions": u(pp.GetPositions()),
		"nodes": perftJob.GetNodes(), "units_verified": u(pp.GetUnitsVerified()), "mismatches": u(pp.GetMismatches()),
		"mismatches_settled": u(pp.GetMismatchesSettled())})
	divide := eval[map[string]string](c, `Object.fromEntries([...document.querySelectorAll('#divide tr[data-move]')].map(r => [r.dataset.move, r.querySelector('[data-value]').dataset.value]))`)
	if len(divide) != len(perftJob.GetDivide()) {
		t.Errorf("perft page: %d divide rows, the snapshot has %d", len(divide), len(perftJob.GetDivide()))
	}
	for _, d := range perftJob.GetDivide() {
		if divide[d.GetMove()] != d.GetNodes() {
			t.Errorf("perft page: %s shows %s, the snapshot says %s", d.GetMove(), divide[d.GetMove()], d.GetNodes())
		}
	}
	if txt := eval[string](c, `document.getElementById('published-check').textContent`); txt != "the total matches it" {
		t.Errorf("perft page: published check says %q", txt)
	}

	c.visit("/workers", "workers")
	ws, err := grpcClient.Admin.ListWorkers(ctx, &arbiterv1.ListWorkersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws.GetWorkers() {
		same(t, "workers page, "+w.GetWorkerId(), c.fields(`#workers tr[data-worker="`+w.GetWorkerId()+`"]`), map[string]string{
			"owner": w.GetOwner(), "cores": u(uint64(w.GetCapabilities().GetCores())),
			"bench_nps": strings.Join(splitThousands(w.GetCapabilities().GetBenchNps()), " ")})
	}
	c.visit("/submit", "submit-anonymous")

	// The checks themselves see problems: an unlabelled field, faint text
	// and a console error put in the page are reported.
	// (The colour is set through the DOM: the pages' CSP drops style
	// attributes.)
	eval[bool](c, `document.querySelector('main').insertAdjacentHTML('beforeend', '<input id="probe-field"><p id="probe-text">faint probe text</p>');
		document.getElementById('probe-text').style.color = '#ddd'; console.error("probe error"); true`)
	if problems := strings.Join(eval[[]string](c, a11yScript), "\n"); !strings.Contains(problems, "probe-field") || !strings.Contains(problems, "faint probe text") {
		t.Errorf("the accessibility check missed planted problems:\n%s", problems)
	}
	if errs := strings.Join(c.consoleErrors(), "\n"); !strings.Contains(errs, "probe error") {
		t.Errorf("the console check missed a planted error: %q", errs)
	}
}

// browseSignedIn signs in and submits, watches, changes, stops,
// reschedules and finds an SPRT, and submits a perft job, from the forms.
func browseSignedIn(t *testing.T, c *chrome, w *browserWork) {
	cl, grpcClient := w.cl, w.grpc
	// ---- sign in, submit an SPRT from the form ----
	c.do("open the sign-in page", chromedp.Navigate(c.base+"/signin"), chromedp.WaitVisible(chromedp.CSS("#token")))
	c.navigate("sign in", chromedp.SendKeys(chromedp.CSS("#token"), cl.client), chromedp.Click(chromedp.CSS("#signin")))
	if who := eval[string](c, `document.querySelector('.who').innerText`); !strings.Contains(who, "carol") {
		t.Fatalf("after signing in: %q", who)
	}
	c.visit("/submit", "submit")
	c.navigate("fill and send the SPRT form",
		// Two equal engines and narrow bounds: the SPRT runs long enough
		// to be watched, changed and cancelled.
		chromedp.SetValue(chromedp.CSS("#engine_a"), "name=strong,builtin"),
		chromedp.SetValue(chromedp.CSS("#engine_b"), "name=twin,builtin"),
		chromedp.SetValue(chromedp.CSS("#each"), "nodes=600"),
		chromedp.SetValue(chromedp.CSS("#book"), "uho-200.epd"),
		chromedp.SetValue(chromedp.CSS("#elo0"), "0"),
		chromedp.SetValue(chromedp.CSS("#elo1"), "2"),
		chromedp.SetValue(chromedp.CSS("#batch_pairs"), "1"),
		chromedp.SetValue(chromedp.CSS("#t-tags"), "browser-find, stc"),
		chromedp.Click(chromedp.CSS("#submit-test")))
	loc := eval[string](c, "location.pathname")
	newID := strings.TrimPrefix(loc, "/tests/")
	if !strings.HasPrefix(loc, "/tests/s") {
		t.Fatalf("the form went to %s: %s", loc, eval[string](c, `document.querySelector('main').innerText`))
	}
	if j := cl.job(t, grpcClient, newID); j.GetSubmitter() != "carol" || j.GetMatch().GetEngineA().GetName() != "strong" {
		t.Fatalf("submitted test: %v", j)
	}
	if errs := c.consoleErrors(); len(errs) > 0 {
		t.Errorf("new test's page: console errors:\n%s", strings.Join(errs, "\n"))
	}

	// ---- live updates: the games count moves without a reload ----
	eval[bool](c, `window.__marker = "no reload"; true`)
	ctxLive, cancelLive := context.WithTimeout(c.ctx, 90*time.Second)
	_, err := chromedp.Run(ctxLive, chromedp.Poll[bool](
		`Number(document.querySelector('#status [data-field="games"]').textContent) >= 4 && document.body.dataset.updates > 0`,
		chromedp.WithPollingInterval(200*time.Millisecond)))
	cancelLive()
	if err != nil {
		t.Fatalf("no live update within 90s: %v; games shown %s", err, eval[string](c, `document.querySelector('#status [data-field="games"]').textContent`))
	}
	if m := eval[string](c, `String(window.__marker)`); m != "no reload" {
		t.Fatalf("the page reloaded (marker %q)", m)
	}
	c.screenshot("test-live")

	// ---- the new test is in the list ----
	c.visit("/?state=running", "list-running")
	if n := eval[int](c, `document.querySelectorAll('tr[data-job="`+newID+`"]').length`); n != 1 {
		t.Errorf("the submitted test is not in the list of running work")
	}

	// ---- change its priority and throughput while it runs, then stop
	// it, from its page ----
	c.do("open the new test", chromedp.Navigate(c.base+"/tests/"+newID), chromedp.WaitVisible(chromedp.CSS("#cancel")))
	c.navigate("change the priority", chromedp.SetValue(chromedp.CSS("#priority"), "7"), chromedp.SetValue(chromedp.CSS("#throughput"), "2.5"),
		chromedp.Submit(chromedp.CSS("#priority")))
	if j := cl.job(t, grpcClient, newID); j.GetMatch().GetPriority() != 7 || j.GetMatch().GetThroughput() != 2.5 ||
		j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING {
		t.Errorf("after the change form: priority %d throughput %v, %v", j.GetMatch().GetPriority(), j.GetMatch().GetThroughput(), j.GetState())
	}
	same(t, "test page after the priority change", c.fields("#status"), map[string]string{"priority": "7", "throughput": "2.5"})
	c.navigate("stop", chromedp.Click(chromedp.CSS("#cancel")))
	j := cl.job(t, grpcClient, newID)
	if j.GetState() != arbiterv1.JobState_JOB_STATE_CANCELLED || !strings.Contains(j.GetError(), "cancelled by carol") || !j.GetMatchProgress().GetStoppedByHand() {
		t.Fatalf("after stop: %v %q stopped by hand %v", j.GetState(), j.GetError(), j.GetMatchProgress().GetStoppedByHand())
	}
	stoppedNote := "SPRT stopped by hand: its error rates no longer hold, so its result is no verdict."
	same(t, "test page after stop", c.fields("#status"), map[string]string{"state": "cancelled " + j.GetError() + " " + stoppedNote,
		"games": u(j.GetMatchProgress().GetGames())})
	if v := eval[string](c, `document.querySelector('[data-field="sprt_verdict"]').textContent`); !strings.Contains(v, "SPRT stopped by hand") {
		t.Errorf("verdict after stop: %q", v)
	}
	c.screenshot("test-cancelled")

	// ---- reschedule it: the copy's page links to the original and the
	// original's to the copy ----
	c.navigate("reschedule", chromedp.Click(chromedp.CSS("#reschedule")))
	loc = eval[string](c, "location.pathname")
	copyID := strings.TrimPrefix(loc, "/tests/")
	if !strings.HasPrefix(loc, "/tests/s") || copyID == newID {
		t.Fatalf("the reschedule went to %s", loc)
	}
	if from := eval[string](c, `document.querySelector('#copy-of a').textContent`); from != newID {
		t.Errorf("the copy's page links to %q, want %s", from, newID)
	}
	c.visit("/tests/"+newID, "")
	if as := eval[string](c, `document.querySelector('#copied-as a').textContent`); as != copyID {
		t.Errorf("the original's page links to %q, want %s", as, copyID)
	}

	browseFind(t, c, w, newID, copyID)
}

// browseFind finds the SPRT and its copy by tag, by user and from the
// filter form, and submits a perft job from the form.
func browseFind(t *testing.T, c *chrome, w *browserWork, newID, copyID string) {
	sprtID, grpcClient, ctx, shots := w.sprt.GetJobId(), w.grpc, context.Background(), w.shots
	// ---- find both by tag and by user; the list marks the stopped SPRT ----
	c.visit("/?tag=browser-find", "find-tag")
	if n := eval[int](c, `document.querySelectorAll('tr[data-job="`+newID+`"], tr[data-job="`+copyID+`"]').length`); n != 2 {
		t.Errorf("by tag: %d of the two tests listed", n)
	}
	if n := eval[int](c, `document.querySelectorAll('tr[data-job="`+sprtID+`"]').length`); n != 0 {
		t.Errorf("by tag: an untagged test is listed")
	}
	if s := eval[string](c, `document.querySelector('tr[data-job="`+newID+`"] [data-field="stopped"]').textContent`); s != "SPRT stopped by hand" {
		t.Errorf("the list's mark: %q", s)
	}
	c.visit("/users/carol", "find-user")
	if n := eval[int](c, `document.querySelectorAll('tr[data-job="`+newID+`"], tr[data-job="`+copyID+`"]').length`); n != 2 {
		t.Errorf("by user: %d of the two tests listed", n)
	}
	c.do("filter by user and tag from the form", chromedp.Navigate(c.base+"/"), chromedp.WaitVisible(chromedp.CSS("#f-tag")))
	c.navigate("filter", chromedp.SetValue(chromedp.CSS("#f-submitter"), "carol"), chromedp.SetValue(chromedp.CSS("#f-tag"), "stc"),
		chromedp.SetValue(chromedp.CSS("#f-state"), "cancelled"), chromedp.Submit(chromedp.CSS("#f-tag")))
	if n := eval[int](c, `document.querySelectorAll('#tests tbody tr').length`); n != 1 || eval[int](c, `document.querySelectorAll('tr[data-job="`+newID+`"]').length`) != 1 {
		t.Errorf("filtered by user, tag and state: %d rows", n)
	}
	if _, err := grpcClient.Jobs.CancelJob(ctx, &arbiterv1.CancelJobRequest{JobId: copyID}); err != nil {
		t.Fatal(err)
	}
	if errs := c.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	// A perft job through the form too.
	c.do("open the submit page", chromedp.Navigate(c.base+"/submit"), chromedp.WaitVisible(chromedp.CSS("#depth")))
	c.navigate("submit a perft job", chromedp.SetValue(chromedp.CSS("#depth"), "4"), chromedp.Click(chromedp.CSS("#submit-perft")))
	if loc := eval[string](c, "location.pathname"); !strings.HasPrefix(loc, "/perft/p") {
		t.Fatalf("the perft form went to %s", loc)
	}
	b, _ := json.Marshal(shots)
	t.Logf("screenshots in %s", b)
}

// splitThousands renders n with its thousands apart, as the pages do (the
// test compares with spaces for the thin spaces).
func splitThousands(n uint64) []string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= 4 {
		return []string{s}
	}
	var out []string
	for len(s) > 3 {
		out = append([]string{s[len(s)-3:]}, out...)
		s = s[:len(s)-3]
	}
	return append([]string{s}, out...)
}
