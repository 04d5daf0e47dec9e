package headless

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Tab is the browser of a test reading a site's pages: pages load from
// Base, and the console's errors are kept until ConsoleErrors takes them.
type Tab struct {
	T    testing.TB
	Ctx  context.Context
	Base string

	mu      sync.Mutex
	console []string
}

// NewTab watches the console of the browser of ctx (from Start) for a
// test reading the pages of base.
func NewTab(t testing.TB, ctx context.Context, base string) *Tab {
	c := &Tab{T: t, Ctx: ctx, Base: base}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				c.mu.Lock()
				c.console = append(c.console, m.String()+" at "+m.URL)
				c.mu.Unlock()
			}
		}
	}()
	return c
}

// ConsoleErrors returns and forgets the console errors seen so far.
func (c *Tab) ConsoleErrors() []string {
	time.Sleep(150 * time.Millisecond) // let late messages arrive
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.console
	c.console = nil
	return out
}

// Visit loads the page of path and checks it: loaded (not an error
// page), no console error, the accessibility basics (A11yScript).
func (c *Tab) Visit(path string) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(c.Ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(c.Base+path), chromedp.WaitVisible(chromedp.CSS("footer.foot"))); err != nil {
		c.T.Fatalf("load %s: %v", path, err)
	}
	title := Eval[string](c, "document.title")
	if strings.Contains(title, "No such page") || strings.Contains(title, "Not found") {
		c.T.Fatalf("%s: title %q", path, title)
	}
	if errs := c.ConsoleErrors(); len(errs) > 0 {
		c.T.Errorf("%s: console errors:\n%s", path, strings.Join(errs, "\n"))
	}
	if problems := Eval[[]string](c, A11yScript); len(problems) > 0 {
		c.T.Errorf("%s: accessibility:\n%s", path, strings.Join(problems, "\n"))
	}
}

// Fields returns the data-field values under sel (FieldsScript).
func (c *Tab) Fields(sel string) map[string]string {
	c.T.Helper()
	m := Eval[map[string]string](c, "("+FieldsScript+")("+strconv.Quote(sel)+")")
	if m == nil {
		c.T.Fatalf("no element %s on the page", sel)
	}
	return m
}

// Eval evaluates js in the tab's page.
func Eval[T any](c *Tab, js string) T {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(c.Ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		c.T.Fatalf("evaluate %.60s: %v", js, err)
	}
	return v
}

// Same reports the fields of a page that differ from want (what its
// source says, named by of).
func Same(t testing.TB, where string, got, want map[string]string, of string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %s shows %q, %s says %q", where, k, g, of, w)
		}
	}
}
