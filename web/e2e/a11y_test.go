package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// axeSource is axe-core from web/node_modules (a test dependency, never
// bundled): it is put into the page by the DevTools protocol only.
func axeSource(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core is missing (npm ci in web/): %v", err)
		}
		t.Skipf("SKIPPING the accessibility checks: axe-core is missing (run npm ci in web/): %v", err)
	}
	return string(b)
}

// checkAxe runs axe-core on the page and fails on serious or critical
// violations.
func checkAxe(t testing.TB, ctx context.Context, src, screen string) {
	t.Helper()
	must(t, ctx, eval(src))
	out := get(t, ctx, chromedp.Evaluate[string](`axe.run(document).then((r) => r.passes.length === 0 ? '"axe checked nothing"' : JSON.stringify(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}))))`, chromedp.EvalAwaitPromise))
	var violations []map[string]any
	if err := json.Unmarshal([]byte(out), &violations); err != nil {
		t.Fatalf("axe on %s: %v: %s", screen, err, out)
	}
	if len(violations) > 0 {
		t.Errorf("axe on %s: %d serious or critical violations: %s", screen, len(violations), out)
	}
}

// Every screen passes axe-core without serious or critical violations, in
// both themes; screenshots of each go to the screenshot directory.
func TestAccessibilityEveryScreen(t *testing.T) {
	src := axeSource(t)
	d := startDaemon(t)
	doc := d.newDoc("Field notes", [2]string{"p1", "A calm surface for writing. 中文排版也要舒服。"}, [2]string{"p2", "Second paragraph."})
	ctx := tab(t)
	must(t, ctx, chromedp.Navigate(d.url+"/signin"), chromedp.WaitVisible(css(`#token`)))
	screenshot(t, ctx, "signin")
	for _, th := range []string{"light", "dark"} {
		must(t, ctx, theme(th))
		checkAxe(t, ctx, src, "sign-in ("+th+")")
	}
	must(t, ctx, theme("light"))
	signIn(t, ctx, d)
	must(t, ctx, chromedp.WaitVisible(css(`.doc-link`)))
	screenshot(t, ctx, "list")
	for _, th := range []string{"light", "dark"} {
		must(t, ctx, theme(th))
		checkAxe(t, ctx, src, "document list ("+th+")")
	}
	must(t, ctx, theme("light"), chromedp.Navigate(d.url+"/d/"+doc), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	screenshot(t, ctx, "editor-doc")
	for _, th := range []string{"light", "dark"} {
		must(t, ctx, theme(th))
		checkAxe(t, ctx, src, "editor ("+th+")")
	}
}

// Sign-in and opening a document work with the keyboard alone.
func TestKeyboardOnly(t *testing.T) {
	d := startDaemon(t)
	d.newDoc("Keyboard", [2]string{"p1", "Reached without a mouse."})
	ctx := tab(t)
	must(t, ctx, chromedp.Navigate(d.url+"/signin"), chromedp.WaitVisible(css(`#token`)))
	// The token field has the focus when the page opens.
	if id := get(t, ctx, chromedp.Evaluate[string](`document.activeElement.id`)); id != "token" {
		t.Fatalf("the sign-in page opens with the focus on %q, want the token field", id)
	}
	must(t, ctx, chromedp.KeyEvent(d.token), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`.doc-link`)))
	// Tab until the document's link has the focus, then Enter.
	for i := 0; ; i++ {
		if i > 20 {
			t.Fatal("20 tabs did not reach the document's link")
		}
		must(t, ctx, chromedp.KeyEvent(kb.Tab))
		if cls := get(t, ctx, chromedp.Evaluate[string](`document.activeElement.className`)); strings.Contains(cls, "doc-link") {
			break
		}
	}
	screenshot(t, ctx, "list-keyboard-focus")
	must(t, ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	text := get(t, ctx, chromedp.Text(css(`.ProseMirror`)))
	if !strings.Contains(text, "Reached without a mouse.") {
		t.Fatalf("the editor opened by keyboard shows %q", text)
	}
}
