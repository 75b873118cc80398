package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var (
	folioBin   string          // the folio binary built for this run
	browserCtx context.Context // the one browser of the run; nil without chromium
	skipReason string
	shotDir    string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "folio-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	chromium := findChromium()
	if chromium == "" {
		skipReason = "chromium is not installed (apt-get install -y chromium): the browser tests cannot run"
		fmt.Fprintln(os.Stderr, "e2e: SKIPPING: "+skipReason)
		return m.Run()
	}
	folioBin = filepath.Join(tmp, "folio")
	build := exec.Command("go", "build", "-o", folioBin, "github.com/foliodev/folio/cmd/folio")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build folio:", err)
		return 1
	}
	shotDir = os.Getenv("FOLIO_SCREENSHOTS")
	if shotDir == "" {
		shotDir = filepath.Join(tmp, "screenshots")
		if os.Getenv("FOLIO_KEEP_SCREENSHOTS") != "" {
			shotDir, _ = os.MkdirTemp("", "folio-screenshots-")
		}
	}
	os.MkdirAll(shotDir, 0o755)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.UserDataDir(filepath.Join(tmp, "profile")),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start chromium:", err)
		return 1
	}
	browserCtx = bctx
	code := m.Run()
	fmt.Fprintln(os.Stderr, "e2e: screenshots in", shotDir)
	return code
}

func findChromium() string {
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

// needBrowser skips (or, under CI=true, fails) a test that has no browser.
func needBrowser(t testing.TB) {
	t.Helper()
	if browserCtx != nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("e2e: " + skipReason)
	}
	t.Skip("e2e: " + skipReason)
}

// daemon is a `folio serve` process.
type daemon struct {
	t     testing.TB
	dir   string
	url   string
	token string
	cmd   *exec.Cmd
	out   *syncBuffer
	done  chan struct{}
	env   []string // more environment for folio serve
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var tokenRE = regexp.MustCompile(`FOLIO_TOKEN=(folio_\S+)`)

// startDaemon runs folio serve on a new data directory and a free port.
func startDaemon(t testing.TB) *daemon {
	t.Helper()
	d := &daemon{t: t, dir: t.TempDir()}
	d.start("127.0.0.1:0")
	return d
}

func (d *daemon) start(listen string) {
	t := d.t
	t.Helper()
	addr := filepath.Join(d.dir, "daemon.addr")
	os.Remove(addr)
	d.out = &syncBuffer{}
	d.done = make(chan struct{})
	d.cmd = exec.Command(folioBin, "serve", "--data", d.dir, "--listen", listen, "--log-level", "warn")
	d.cmd.Env = append(append(os.Environ(), "FOLIO_CONFIG=", "FOLIO_LISTEN=", "FOLIO_SERVER=", "FOLIO_TOKEN="), d.env...)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd, done := d.cmd, d.done
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(addr)
		if err == nil && len(b) > 0 && (d.token != "" || tokenRE.MatchString(d.out.String())) {
			d.url = strings.TrimSpace(string(b))
			break
		}
		select {
		case <-done:
			t.Fatalf("folio serve exited:\n%s", d.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("folio serve did not start:\n%s", d.out)
		}
		time.Sleep(20 * time.Millisecond) // polling a file the daemon writes once
	}
	if d.token == "" {
		d.token = tokenRE.FindStringSubmatch(d.out.String())[1]
	}
}

// stop ends the daemon gracefully (SIGTERM) and waits for it.
func (d *daemon) stop() {
	d.t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		d.t.Fatalf("folio serve did not stop:\n%s", d.out)
	}
}

// restart starts the daemon again on the same address and data.
func (d *daemon) restart() {
	d.t.Helper()
	d.start(strings.TrimPrefix(d.url, "http://"))
}

// api calls the daemon's HTTP API as the admin.
func (d *daemon) api(method, path string, body, out any) {
	d.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.url+path, r)
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		d.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			d.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// newDoc creates a document with paragraphs of the given ids and texts.
func (d *daemon) newDoc(title string, paras ...[2]string) string {
	d.t.Helper()
	blocks := []map[string]any{}
	for _, p := range paras {
		blocks = append(blocks, map[string]any{"id": p[0], "type": "paragraph", "richText": []map[string]any{{"text": p[1]}}})
	}
	var v struct {
		Doc string `json:"doc"`
	}
	d.api("POST", "/v1/docs", map[string]any{"attrs": map[string]any{"title": title}, "body": map[string]any{"schemaVersion": 1, "blocks": blocks}}, &v)
	return v.Doc
}

// draftText returns the draft's blocks' plain text by id, from the API.
func (d *daemon) draftText(doc string) map[string]string {
	d.t.Helper()
	var v struct {
		Body struct {
			Blocks []struct {
				ID       string `json:"id"`
				RichText []struct {
					Text string `json:"text"`
				} `json:"richText"`
			} `json:"blocks"`
		} `json:"body"`
	}
	d.api("GET", "/v1/docs/"+doc+"/draft", nil, &v)
	out := map[string]string{}
	for _, b := range v.Body.Blocks {
		var s strings.Builder
		for _, r := range b.RichText {
			s.WriteString(r.Text)
		}
		out[b.ID] = s.String()
	}
	return out
}

// tab opens a new browser tab; it closes when the test ends.
func tab(t testing.TB) context.Context {
	t.Helper()
	needBrowser(t)
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithListener(func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			t.Logf("console.%s: %s", ev.Type, strings.Join(parts, " "))
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			t.Logf("page exception: %s", msg)
		}
	}))
	t.Cleanup(cancel)
	// Every tab acts as the focused one, as a person's window would be
	// (several tabs type at once).
	focus := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	})
	if err := chromedp.Do(ctx, focus); err != nil {
		t.Fatal(err)
	}
	return ctx
}

type step = chromedp.Action[chromedp.Void]

// waitLimit bounds every wait of a test on the page.
const waitLimit = 20 * time.Second

func must(t testing.TB, ctx context.Context, steps ...step) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	if err := chromedp.Do(wctx, steps...); err != nil {
		t.Fatalf("%v\npage state: %s", err, pageState(ctx))
	}
}

// pageState describes the page for a failure message.
func pageState(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const e = window.folioEditor;
		const blocks = [...document.querySelectorAll('.ProseMirror > [data-block-id]')].map((n) => n.dataset.blockId + '=' + JSON.stringify(n.textContent));
		if (!e) return location.pathname + ' ' + document.body.innerText.slice(0, 300);
		const s = e.sync;
		return JSON.stringify({path: location.pathname, status: s.status(), inflight: s.inflight, dirty: s.dirty, conflicts: [...s.conflicts.keys()], deferred: s.deferred.length, copySeq: s.copy && s.copy.seq, blocks});
	})()`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// get runs one action that returns a value.
func get[T any](t testing.TB, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	v, err := chromedp.Run(wctx, a)
	if err != nil {
		t.Fatalf("%v\npage state: %s", err, pageState(ctx))
	}
	return v
}

// eval runs JavaScript in the page.
func eval(expr string) step {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[any](expr, chromedp.EvalAwaitPromise)(ctx, tg)
		return chromedp.Void{}, err
	}
}

// css is a CSS selector.
func css(s string) chromedp.CSS { return chromedp.CSS(s) }

// signIn signs in at /signin with the token and waits for the list.
func signIn(t testing.TB, ctx context.Context, d *daemon) {
	t.Helper()
	must(t, ctx,
		chromedp.Navigate(d.url+"/signin"),
		chromedp.WaitVisible(css(`#token`)),
		chromedp.SendKeys(css(`#token`), d.token),
		chromedp.Click(css(`.signin-form button[type=submit]`)),
		chromedp.WaitVisible(css(`#doc-list`)),
	)
}

// waitSynced waits until the editor says saved.
func waitSynced(t testing.TB, ctx context.Context) {
	t.Helper()
	must(t, ctx, chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
}

// waitJS waits until the expression is true in the page.
func waitJS(t testing.TB, ctx context.Context, expr string) {
	t.Helper()
	must(t, ctx, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[any](expr, chromedp.WithPollingInterval(20*time.Millisecond))(ctx, tg)
		if err != nil {
			err = fmt.Errorf("waiting for %s: %w", expr, err)
		}
		return chromedp.Void{}, err
	})
}

// typeInBlock puts the caret at the end of block id and types text.
func typeInBlock(t testing.TB, ctx context.Context, id, text string) {
	t.Helper()
	must(t, ctx, caretAtEnd(id), insertText(text))
}

// caretAtEnd places the caret at the end of block id (a DOM selection,
// which ProseMirror reads as its own).
func caretAtEnd(id string) step {
	return caretAt(fmt.Sprintf(`.ProseMirror [data-block-id=%q]`, id), true)
}

// caretAt puts the caret at the start or the end of the element sel
// finds, through the editor (as a click there would), so that the next
// input lands there whatever the editor does with the page's selection
// when it gains focus.
func caretAt(sel string, end bool) step {
	return eval(fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		const ed = window.folioEditor.view.editor;
		const pos = ed.view.posAtDOM(el, %t ? el.childNodes.length : 0);
		ed.commands.setTextSelection(pos);
		ed.view.focus(); // now, not on the next animation frame, which a background tab never gets
		return ed.state.selection.from === pos && ed.view.hasFocus(); })()`, sel, end))
}

// insertText types text at the caret as one input (Input.insertText).
func insertText(text string) step {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// theme emulates prefers-color-scheme.
func theme(name string) step {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: name}}})
		return err
	})
}

// screenshot saves the page in the light and the dark theme.
func screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	for _, th := range []string{"light", "dark"} {
		must(t, ctx, theme(th))
		buf := get(t, ctx, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(shotDir, name+"-"+th+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(t, ctx, theme("light"))
}
