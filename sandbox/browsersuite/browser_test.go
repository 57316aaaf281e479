// SPDX-License-Identifier: Apache-2.0

package browsersuite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// screensDir keeps a copy of every screenshot for a person to look at, outside the repository.
const screensDir = "/tmp/muster-screens"

// browser is one headless Chromium tab driven over the DevTools protocol.
type browser struct {
	t       *testing.T
	ctx     context.Context
	screens string
	shot    int
}

// newBrowser starts headless Chromium for the test; it stops with the test.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(suite.chromium),
		chromedp.NoSandbox, // the suite runs as root in CI
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first run starts the browser; it must not carry a timeout (that would end the browser).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium %s: %v", suite.chromium, err)
	}
	b := &browser{t: t, ctx: ctx, screens: t.TempDir()}
	if err := os.MkdirAll(screensDir, 0o755); err != nil {
		t.Fatalf("screenshots directory: %v", err)
	}
	// The copies are of the latest run only: an earlier run's failure shots would mislead.
	old, _ := filepath.Glob(filepath.Join(screensDir, "*.png"))
	for _, f := range old {
		_ = os.Remove(f)
	}
	return b
}

// do runs steps, bounded by timeout.
func (b *browser) do(what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail(what, err)
	}
}

// waitJS waits until the JavaScript expression is truthy in the page and returns its value as a
// string; on timeout it fails with the page's visible text and a screenshot.
func (b *browser) waitJS(what, expr string, timeout time.Duration) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Poll[any](expr,
		chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(100*time.Millisecond)))
	if err != nil {
		b.fail(what, err)
	}
	if s, ok := v.(string); ok {
		return s
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// eval evaluates a JavaScript expression once.
func (b *browser) eval(expr string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr))
	if err != nil {
		b.fail("evaluate "+expr, err)
	}
	if s, ok := v.(string); ok {
		return s
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func (b *browser) fail(what string, err error) {
	b.t.Helper()
	b.screenshot("failed-" + strings.ReplaceAll(what, " ", "-"))
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
	b.t.Fatalf("%s: %v\n---- the page shows ----\n%s", what, err, text)
}

// screenshot saves the whole page as a PNG in the test's directory and in screensDir.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	b.shot++
	file := fmt.Sprintf("%02d-%s.png", b.shot, name)
	for _, dir := range []string{b.screens, screensDir} {
		if err := os.WriteFile(filepath.Join(dir, file), png, 0o644); err != nil {
			b.t.Errorf("screenshot %s: %v", name, err)
		}
	}
	b.t.Logf("screenshot %s", filepath.Join(screensDir, file))
}

// js quotes a Go string as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
