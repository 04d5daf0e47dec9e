package verify_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/verifyclient"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
	"github.com/arbiter-chess/arbiter/testing/headless"
	"github.com/arbiter-chess/arbiter/verify"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// TestVerifyPageInABrowser: a real verify session (a deliberately broken
// engine on two workers of a farm with the program's kinds, through
// VerifyService as arbiter verify --coordinator runs it) is read in a
// real headless Chromium: its row in the list ("Verify sessions", which
// coordinator/web keeps, reading the sessions through web.VerifySessions)
// and its page, /verify/{id}, which registers from this kind (page.go).
// Each page loads with no console error and passes the accessibility
// check (headless.A11yScript), and shows the session's numbers and its
// findings with the command that reproduces them. Control: with the
// page's registration taken out, /verify/{id} is "No such page" and this
// test fails. (Moved from coordinator/web's TestBrowser with the page.)
func TestVerifyPageInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ctx := headless.Start(t, chromedp.WindowSize(1280, 900))
	bug, err := verifyproto.ParseLocalEngine("name=bug,cmd=" + buildBroken(t) + `,args="-bug underpromo,castle-through-check"`)
	if err != nil {
		t.Fatal(err)
	}
	farm := farmtest.Start(t, 2, func(c *localcluster.Config) { c.VerifyEngines = []verifyproto.LocalEngine{bug} })
	sid := runVerifySession(t, farm.Client(t))

	c := &page{t: t, ctx: ctx, base: farm.URL}
	c.watchConsole()
	c.visit("/")
	same(t, "list, verify row", c.fields(`tr[data-job="verify.`+sid+`"]`), map[string]string{"positions": "3", "bugs": "2"})
	c.visit("/verify/" + sid)
	same(t, "verify page", c.fields("#main"), map[string]string{"positions": "3", "ok": "1", "bugs": "2", "state": "done"})
	text := eval[string](c, `document.querySelector('main').innerText`)
	for _, want := range []string{"missing under-promotion to knight", "castling through an attacked square", "arbiter verify --engine cmd=bug --fen"} {
		if !strings.Contains(text, want) {
			t.Errorf("verify page: no %q", want)
		}
	}
}

// buildBroken builds the deliberately broken perft engine for the verify
// session.
func buildBroken(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "brokenperft")
	out, err := exec.Command("go", "build", "-o", bin, "../../testing/testengines/brokenperft").CombinedOutput()
	if err != nil {
		t.Fatalf("building brokenperft: %v\n%s", err, out)
	}
	return bin
}

// runVerifySession verifies the broken engine through the farm, as
// arbiter verify --coordinator does, reports the session and returns its
// id.
func runVerifySession(t *testing.T, c *clusterclient.Client) string {
	t.Helper()
	name, spec, err := verifyproto.ParseClientEngine("name=bug")
	if err != nil {
		t.Fatal(err)
	}
	eng := verifyclient.New(verifyclient.Config{Client: c, Name: name, Spec: spec, Timeout: 20 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	var reps []verify.Report
	for _, tg := range []verify.Target{
		{ID: "underpromo", FEN: "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", Depth: 3},
		{ID: "castling", FEN: "4k3/3r4/8/8/8/8/8/R3K2R b KQ - 0 1", Depth: 3},
		{ID: "startpos", FEN: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", Depth: 2},
	} {
		reps = append(reps, verify.Verify(ctx, eng, tg, verify.Options{Threads: 1, Reproduce: eng.EngineArg()}))
	}
	n, err := eng.Report(ctx, reps, 3, time.Since(start))
	if err != nil || n != 2 {
		t.Fatalf("report: %d stored, %v", n, err)
	}
	eng.Close()
	return eng.Session()
}

// page is a Chromium tab on the farm's pages that keeps the console's
// errors.
type page struct {
	t         *testing.T
	ctx       context.Context
	base      string
	mu        sync.Mutex
	consoleEr []string
}

func (c *page) watchConsole() {
	messages := chromedp.Console(c.ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				c.mu.Lock()
				c.consoleEr = append(c.consoleEr, m.String()+" at "+m.URL)
				c.mu.Unlock()
			}
		}
	}()
}

// visit loads a page and checks it: loaded (not an error page), no
// console error, the accessibility basics.
func (c *page) visit(path string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(c.base+path), chromedp.WaitVisible(chromedp.CSS("footer.foot"))); err != nil {
		c.t.Fatalf("load %s: %v", path, err)
	}
	if title := eval[string](c, "document.title"); strings.Contains(title, "No such page") || strings.Contains(title, "Not found") {
		c.t.Fatalf("%s: title %q", path, title)
	}
	time.Sleep(150 * time.Millisecond) // let late console messages arrive
	c.mu.Lock()
	errs := c.consoleEr
	c.consoleEr = nil
	c.mu.Unlock()
	if len(errs) > 0 {
		c.t.Errorf("%s: console errors:\n%s", path, strings.Join(errs, "\n"))
	}
	if problems := eval[[]string](c, headless.A11yScript); len(problems) > 0 {
		c.t.Errorf("%s: accessibility:\n%s", path, strings.Join(problems, "\n"))
	}
}

// fields returns the data-field values under sel.
func (c *page) fields(sel string) map[string]string {
	c.t.Helper()
	m := eval[map[string]string](c, "("+headless.FieldsScript+")("+strconv.Quote(sel)+")")
	if m == nil {
		c.t.Fatalf("no element %s on the page", sel)
	}
	return m
}

func eval[T any](c *page, js string) T {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		c.t.Fatalf("evaluate %.60s: %v", js, err)
	}
	return v
}

// same reports the fields of a page that differ from want.
func same(t *testing.T, where string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %s shows %q, want %q", where, k, g, w)
		}
	}
}
