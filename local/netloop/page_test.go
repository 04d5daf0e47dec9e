package netloop

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiter-chess/arbiter/testing/headless"
)

// TestPageFollowsTheLoop: DIR/index.html shows the running step while it
// runs, and at the end each generation's data, its training (with a loss
// chart of its epochs) and its SPRT, read back by a real headless
// Chromium from the file. The control: a loop stopped in its training
// shows the data done, the training stopped and the loop not done (and
// the page reloads itself).
func TestPageFollowsTheLoop(t *testing.T) {
	r := tinyRunner(t, "epochs=3,batch=64", 24)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOn{mark: "generation 1: train", cancel: cancel}
	var during string
	r.Out = &copyPage{w: out, mark: "generation 1: train", path: r.Dir.path(PageFile), page: &during}
	if _, err := r.Run(ctx); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("stopped loop: %v", err)
	}
	if !strings.Contains(during, `class="train running"`) {
		t.Errorf("the page while training does not show it running:\n%s", during)
	}
	b := newBrowser(t)
	stopped := b.rows(r.Dir.path(PageFile))
	if !strings.Contains(stopped["data"], "300 positions") || !strings.Contains(stopped["train"], "stopped after 1 attempt(s)") ||
		stopped["state"] != "not done" || stopped["refresh"] != "30" {
		t.Errorf("page of the stopped loop: %q", stopped)
	}

	r.Out = &cancelOn{}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := b.rows(r.Dir.path(PageFile))
	for cell, want := range map[string]string{
		"data":   "300 positions",
		"train":  "3 epochs: train loss",
		"sprt":   "LLR",
		"state":  "done",
		"charts": "2", // two polylines: train and validation
	} {
		if !strings.Contains(done[cell], want) {
			t.Errorf("finished page: %s = %q, want %q in it", cell, done[cell], want)
		}
	}
	if !strings.Contains(done["train"], "2 attempts") {
		t.Errorf("finished page: the training's attempts: %q", done["train"])
	}
	if done["refresh"] != "" {
		t.Errorf("a finished loop's page still reloads itself every %s s", done["refresh"])
	}
}

// copyPage copies the page file into page when a line has mark.
type copyPage struct {
	w          *cancelOn
	mark, path string
	page       *string
}

func (c *copyPage) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.mark) && *c.page == "" {
		b, _ := os.ReadFile(c.path)
		*c.page = string(b)
	}
	return c.w.Write(p)
}

type browser struct {
	t   *testing.T
	ctx context.Context
}

func newBrowser(t *testing.T) *browser {
	return &browser{t: t, ctx: headless.Start(t)}
}

// rows opens the page file and reads generation 1's cells, the loop's
// state, its reload period and the number of loss lines drawn.
func (b *browser) rows(path string) map[string]string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	js := `JSON.stringify({
		data: document.querySelector("#gen-1 td.data").innerText,
		train: document.querySelector("#gen-1 td.train").innerText,
		sprt: document.querySelector("#gen-1 td.sprt").innerText,
		state: document.querySelector("#state").innerText,
		refresh: (document.querySelector('meta[http-equiv="refresh"]') || {content: ""}).content,
		charts: String(document.querySelectorAll("#gen-1 svg.loss polyline").length),
	})`
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
		b.t.Fatalf("opening %s: %v", path, err)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("reading %s: %v", path, err)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		b.t.Fatal(err)
	}
	return m
}
