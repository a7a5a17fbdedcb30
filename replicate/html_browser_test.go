package replicate

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium is the browser the HTML report is checked in: Debian's package. The
// test skips without it, unless REPLAY_REQUIRE_CHROMIUM is set (CI sets it, so
// a missing browser fails there instead of passing silently).
func chromium(t *testing.T) string {
	t.Helper()
	path := "/usr/bin/chromium"
	if _, err := os.Stat(path); err != nil {
		if p, lerr := exec.LookPath("chromium"); lerr == nil {
			return p
		}
		if os.Getenv("REPLAY_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("REPLAY_REQUIRE_CHROMIUM is set but %s is missing: apt-get install -y chromium", path)
		}
		t.Skipf("the HTML report's browser test needs chromium (%s is missing): apt-get install -y chromium, or set REPLAY_REQUIRE_CHROMIUM=1 to make this a failure", path)
	}
	return path
}

// pageProblems collects the page's console errors, uncaught exceptions and
// error log entries (a failed load, a blocked resource).
type pageProblems struct {
	mu   sync.Mutex
	list []string
}

func (p *pageProblems) listen(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		p.list = append(p.list, "exception: "+e.ExceptionDetails.Error())
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.APITypeError || e.Type == runtime.APITypeAssert {
			p.list = append(p.list, "console "+string(e.Type))
		}
	case *log.EventEntryAdded:
		if e.Entry.Level == log.LevelError {
			p.list = append(p.list, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	}
}

// browserHome returns a fresh folder for the browser's own files under a short
// path. Chromium puts a unix socket (its singleton lock) into the profile, and a
// socket path is limited to 108 bytes: under t.TempDir with a TMPDIR longer than
// a few characters Chromium fails with "Socket path too long". So the folder is
// made under /tmp when there is one (else the system temp dir), not under
// TMPDIR, and removed with retries once the browser is closed: helper processes
// of a killed Chromium may still be writing there for a moment.
func browserHome() (string, error) {
	root := os.TempDir()
	if fi, err := os.Stat("/tmp"); err == nil && fi.IsDir() {
		root = "/tmp"
	}
	return os.MkdirTemp(root, "r")
}

// browser is the one headless Chromium the package's tests open their pages in,
// each in a tab of its own (its own target, so its own console and log): the
// first test that browses starts it, TestMain closes it. Starting Chromium is
// most of a page test's time.
var browser struct {
	once  sync.Once
	ctx   context.Context // the browser's: a tab is a chromedp.NewContext of it
	close func()
	err   error
}

// sharedBrowser returns the context of the package's browser (bin), starting it
// on first use with its profile, HOME and TMPDIR in a short folder of its own
// (see browserHome).
func sharedBrowser(t *testing.T, bin string) context.Context {
	t.Helper()
	browser.once.Do(func() {
		home, err := browserHome()
		if err != nil {
			browser.err = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			chromedp.UserDataDir(filepath.Join(home, "profile")), chromedp.WindowSize(1000, 800),
			chromedp.Env("HOME="+home, "TMPDIR="+home),
		}
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelBrowser := chromedp.NewContext(allocCtx)
		browser.ctx = ctx
		browser.close = func() {
			cancelBrowser()
			cancelAlloc() // waits for the browser process to end
			removeEventually(home)
		}
		// The first Run starts the browser, bound to the context it is given
		// (so not one with a deadline): a start that hangs is cancelled.
		hung := time.AfterFunc(90*time.Second, cancelBrowser)
		browser.err = chromedp.Run(ctx)
		hung.Stop()
	})
	require.NoError(t, browser.err, "starting %s", bin)
	return browser.ctx
}

// TestMain closes the package's browser once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if browser.close != nil {
		browser.close()
	}
	os.Exit(code)
}

// browse opens file in a new tab of the package's headless Chromium (bin), runs
// actions on it and returns the page's problems.
func browse(t *testing.T, bin, file string, actions ...chromedp.Action) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(sharedBrowser(t, bin), 90*time.Second)
	defer cancel()
	ctx, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()
	problems := &pageProblems{}
	chromedp.ListenTarget(ctx, problems.listen)
	steps := append([]chromedp.Action{log.Enable(), runtime.Enable(), chromedp.Navigate("file://" + file)}, actions...)
	require.NoError(t, chromedp.Run(ctx, steps...))
	problems.mu.Lock()
	defer problems.mu.Unlock()
	return slices.Clone(problems.list)
}

// removeEventually removes dir, retrying for up to 10 s while files still appear in it.
func removeEventually(dir string) {
	for range 100 {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestHTMLReportRendersInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	f, err := os.Create(file)
	require.NoError(t, err)
	require.NoError(t, WriteHTML(f, sampleResult(t)))
	require.NoError(t, f.Close())

	var charts []map[string]float64
	var effects []map[string]any
	var cells, dots int
	var title, headline string
	var ticks []string
	var shot []byte
	problems := browse(t, bin, file,
		chromedp.WaitVisible("svg.chart", chromedp.ByQuery),
		chromedp.Title(&title),
		chromedp.Evaluate(`document.querySelector("p.headline").innerText + " " + (document.querySelector("p.luck") || {innerText: ""}).innerText`, &headline),
		// Box and whiskers over the same (passing) replicas: the box lies within the whiskers.
		chromedp.Evaluate(`Array.from(document.querySelectorAll("svg.chart")).map(s => {
			const r = s.getBoundingClientRect(), b = s.querySelector("rect.box").getBBox();
			let inside = 1;
			s.querySelectorAll("g").forEach(g => {
				const box = g.querySelector("rect.box"), w = g.querySelector("line.whisker");
				if (box && w) {
					const bx = box.getBBox();
					if (bx.x < +w.getAttribute("x1") - 0.01 || bx.x + bx.width > +w.getAttribute("x2") + 1.01) inside = 0;
				}
			});
			return {w: r.width, h: r.height, box: b.width, dots: s.querySelectorAll("circle").length, inside: inside};
		})`, &charts),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("svg text.axis")).map(t => t.textContent)`, &ticks),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("svg.effects g.effect-row")).map(g => {
			const bar = g.querySelector("line.ci, line.ci-open"), r = bar ? bar.getBoundingClientRect() : {width: -1};
			return {title: g.querySelector("text").textContent, bar: r.width, point: g.querySelectorAll("circle.pt").length};
		})`, &effects),
		chromedp.Evaluate(`document.querySelectorAll("table.heatmap svg rect").length`, &cells),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("svg.chart circle")).filter(c => c.getBoundingClientRect().width > 0).length`, &dots),
		chromedp.FullScreenshot(&shot, 100),
	)
	shotPath := filepath.Join(dir, "report.png")
	require.NoError(t, os.WriteFile(shotPath, shot, 0o644))
	t.Logf("screenshot of the HTML report: %s", shotPath)
	if keep := os.Getenv("REPLAY_SCREENSHOT_DIR"); keep != "" {
		require.NoError(t, os.WriteFile(filepath.Join(keep, "replicate-report.png"), shot, 0o644))
	}

	assert.Empty(t, problems, "no console error or exception")
	assert.Equal(t, "Replicated A/B replay of session sess-1", title)
	require.Len(t, charts, len(MetricNames()), "one chart per metric")
	assert.Contains(t, headline, "Not decided yet")
	assert.Contains(t, headline, "Could be luck: about 3 more replicas per arm would tell")
	assert.NotRegexp(t, `\bp\s*[=<]|p-value|e-value`, headline, "no p-value in the headline")
	require.Len(t, effects, 3, "pass rate, pairs won and the deciding metric: each a difference with its interval")
	for _, e := range effects {
		assert.Greater(t, e["bar"], 10.0, "%v: its interval is drawn", e["title"])
		assert.Equal(t, 1.0, e["point"], "%v: its point is drawn", e["title"])
	}
	for _, tk := range ticks {
		assert.Regexp(t, `^[+-]?\d+(\.\d)?%?$`, tk, "ticks are round numbers")
	}
	for i, c := range charts {
		assert.Equal(t, 1.0, c["inside"], "chart %d: the box lies within its whiskers (both over the passing replicas)", i)
		assert.Greater(t, c["w"], 100.0, "chart %d has a width", i)
		assert.Greater(t, c["h"], 50.0, "chart %d has a height", i)
		assert.Greater(t, c["box"], 0.0, "chart %d draws its box", i)
		assert.Equal(t, 12.0, c["dots"], "chart %d: one dot per replica", i)
	}
	assert.Equal(t, 12*len(MetricNames()), dots, "every dot is drawn")
	assert.Equal(t, 2*3, cells, "the heatmap has a cell per dispatch and arm")
	assert.True(t, bytes.HasPrefix(shot, []byte("\x89PNG")), "the screenshot is a PNG")
}

// TestChromiumCatchesPageProblems is the other side of the check above: a page
// with a console error, an exception and a failed load is caught.
func TestChromiumCatchesPageProblems(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.html")
	page := `<!DOCTYPE html><html><body><img src="missing.png"><script>console.error("boom"); null.x;</script></body></html>`
	require.NoError(t, os.WriteFile(file, []byte(page), 0o644))
	problems := browse(t, bin, file, chromedp.Sleep(500*time.Millisecond))
	joined := strings.Join(problems, "\n")
	assert.Contains(t, joined, "console error")
	assert.Contains(t, joined, "exception")
	assert.Contains(t, joined, "missing.png")
}

// TestHTMLStatsInChromium: as a browser renders it, the page says what the
// decision rests on (alpha, the tests with their evidence, the confidence
// sequences, how many more replicas would tell, the deciding step of the rule
// highlighted, once the details are opened) and shows a dispatch an arm did not
// run as "did not run".
func TestHTMLStatsInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	res := notRunResult(t)
	f, err := os.Create(file)
	require.NoError(t, err)
	require.NoError(t, WriteHTML(f, res))
	require.NoError(t, f.Close())

	var text, decisive, lastRow string
	problems := browse(t, bin, file,
		chromedp.WaitReady("ul.stats", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("details").open = true`, nil),
		chromedp.WaitVisible("ul.stats", chromedp.ByQuery),
		chromedp.Evaluate(`document.body.innerText`, &text),
		chromedp.Evaluate(`document.querySelector("ol.rule li.decisive").innerText`, &decisive),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("table.heatmap tr")).pop().innerText`, &lastRow),
	)
	assert.Empty(t, problems, "no console error or exception")
	for _, line := range StatisticsLines(res.Decision) {
		assert.Contains(t, text, line, "the page shows the decision's statistics")
	}
	for _, w := range []string{"Alpha: 0.05", "reaches 60", "confidence sequence [-0.74, 0.76]", "18.1 that it is better", "about 3 more replicas per arm would tell"} {
		assert.Contains(t, text, w)
	}
	assert.Equal(t, RuleStep(res.RuleText, res.Decision.Step), decisive, "the deciding step is the highlighted one")
	assert.Contains(t, lastRow, "acceptance")
	assert.Contains(t, lastRow, "did not run", "the mutated arm never ran dispatch 7")
}
