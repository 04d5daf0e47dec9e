package verify_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
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

	c := headless.NewTab(t, ctx, farm.URL)
	c.Visit("/")
	headless.Same(t, "list, verify row", c.Fields(`tr[data-job="verify.`+sid+`"]`), map[string]string{"positions": "3", "bugs": "2"}, "the session")
	c.Visit("/verify/" + sid)
	headless.Same(t, "verify page", c.Fields("#main"), map[string]string{"positions": "3", "ok": "1", "bugs": "2", "state": "done"}, "the session")
	text := headless.Eval[string](c, `document.querySelector('main').innerText`)
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
