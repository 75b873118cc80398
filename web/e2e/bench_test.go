package e2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// newBigDoc creates a document of n paragraphs p0…p(n-1).
func newBigDoc(d *daemon, n int) string {
	paras := make([][2]string, n)
	for i := range paras {
		paras[i] = [2]string{fmt.Sprintf("p%d", i), fmt.Sprintf("Paragraph %d of a long document, with some words to lay out on the line. 第%d段。", i, i)}
	}
	return d.newDoc("Big", paras...)
}

// BenchmarkTimeToEditable is the time from navigation to a 500-block
// document shown and editable (the first snapshot written into the
// editor: performance mark folio:editable), in ms-to-editable.
func BenchmarkTimeToEditable(b *testing.B) {
	bt := b
	d := startDaemon(bt)
	doc := newBigDoc(d, 500)
	ctx := tab(bt)
	signIn(bt, ctx, d)
	var total float64
	for i := 0; i < b.N; i++ {
		must(bt, ctx, chromedp.Navigate(d.url+"/d/"+doc), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
		ms := get(bt, ctx, chromedp.Evaluate[float64](`performance.getEntriesByName('folio:editable')[0].startTime`))
		total += ms
		if n := get(bt, ctx, chromedp.Evaluate[int](`document.querySelectorAll('.ProseMirror > p').length`)); n != 500 {
			b.Fatalf("the editor shows %d paragraphs, want 500", n)
		}
	}
	b.ReportMetric(total/float64(b.N), "ms-to-editable")
}

// BenchmarkKeystrokeAck10Tabs: 10 tabs on one 200-block document, each
// typing into its own block; every keystroke is saved at once (flush, not
// the 1.2 s cadence) and its time to draft.ack is measured in the page.
// Reports the p50 and p99 over every keystroke of every tab.
// FOLIO_BENCH_TABS=N runs N tabs instead.
func BenchmarkKeystrokeAck10Tabs(b *testing.B) {
	bt := b
	d := startDaemon(bt)
	doc := newBigDoc(d, 200)
	tabs, keys := 10, 30
	if n, err := strconv.Atoi(os.Getenv("FOLIO_BENCH_TABS")); err == nil && n > 0 {
		tabs = n // a smaller run shows what the contention of 10 costs
	}
	ctxs := make([]context.Context, tabs)
	for i := range ctxs {
		ctxs[i] = openDoc(bt, d, doc)
	}
	b.ResetTimer()
	var all []float64
	for n := 0; n < b.N; n++ {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i, ctx := range ctxs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				js := fmt.Sprintf(`(async () => {
					const { sync, view } = window.folioEditor;
					const ed = view.editor;
					const out = [];
					for (let k = 0; k < %d; k++) {
						let pos = -1;
						ed.state.doc.forEach((node, off) => { if (node.attrs.id === 'p%d') pos = off + node.nodeSize - 1; });
						const t0 = performance.now();
						ed.view.dispatch(ed.state.tr.insertText('x', pos));
						await new Promise((resolve) => {
							const check = () => (sync.status().state === 'saved' ? resolve() : (sync.waiters = sync.waiters || []).push(check));
							sync.flush();
							check();
						});
						out.push(performance.now() - t0);
					}
					return out;
				})()`, keys, i*20)
				lat, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](js, chromedp.EvalAwaitPromise))
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				all = append(all, lat...)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	sort.Float64s(all)
	if len(all) == 0 {
		b.Fatal("no keystroke was measured")
	}
	b.ReportMetric(all[len(all)/2], "p50-ms")
	b.ReportMetric(all[len(all)*99/100], "p99-ms")
	b.ReportMetric(float64(len(all)), "keystrokes")
}
