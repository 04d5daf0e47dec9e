// Package headless starts a real headless Chromium (Debian's chromium
// package, which .ci/run installs) for the tests that read or drive a
// page as a browser does.
package headless

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// Chromium is the browser's path (Debian's package).
const Chromium = "/usr/bin/chromium"

// Start starts Chromium for t, with a profile of its own, and returns the
// browser's context; the browser ends with t. A test on a machine without
// Chromium is skipped, naming the package. The browser starts on
// context.Background: one started by a call with a time limit would end
// with that call.
func Start(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		t.Skip("no " + Chromium + " (Debian package chromium)")
	}
	opts := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(Chromium), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(t.TempDir())}, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}
