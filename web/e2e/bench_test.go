package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
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
// editor: performance mark folio:editable), in ms-to-editable, and to the
// snapshot's arrival (ms-to-snapshot).
func BenchmarkTimeToEditable(b *testing.B) {
	bt := b
	d := startDaemon(bt)
	doc := newBigDoc(d, 500)
	ctx := tab(bt)
	signIn(bt, ctx, d)
	var total, snap float64
	for i := 0; i < b.N; i++ {
		must(bt, ctx, chromedp.Navigate(d.url+"/d/"+doc), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
		ms := get(bt, ctx, chromedp.Evaluate[float64](`performance.getEntriesByName('folio:editable')[0].startTime`))
		total += ms
		// A build without the mark (an older one, run side by side) reports 0.
		snap += get(bt, ctx, chromedp.Evaluate[float64](`(performance.getEntriesByName('folio:snapshot')[0] || { startTime: 0 }).startTime`))
		if n := get(bt, ctx, chromedp.Evaluate[int](`document.querySelectorAll('.ProseMirror > p').length`)); n != 500 {
			b.Fatalf("the editor shows %d paragraphs, want 500", n)
		}
	}
	b.ReportMetric(total/float64(b.N), "ms-to-editable")
	// The snapshot's arrival (editor/editor.js marks folio:snapshot):
	// what comes before it is the script, the screen and the socket;
	// after it, rendering the blocks.
	b.ReportMetric(snap/float64(b.N), "ms-to-snapshot")
}

// instrument makes the page of ctx record, for the benchmarks, each
// keystroke (the time of its input event, and the time to the next frame
// after its beforeinput: what the writer sees), each save sent and its
// ack, and the time each draft.updated takes to apply. It wraps the
// DocSync's own methods; nothing of the page changes otherwise.
const instrument = `(() => {
	const { sync, view } = window.folioEditor;
	const B = window.__bench = { keys: [], frames: [], saves: [], remote: [] };
	const dom = view.editor.view.dom;
	dom.addEventListener('beforeinput', () => { const t0 = performance.now(); requestAnimationFrame(() => B.frames.push(performance.now() - t0)); });
	dom.addEventListener('input', () => B.keys.push(performance.now()));
	const send = sync.send.bind(sync);
	sync.send = (f) => { B.saves.push({ id: f.id, sent: performance.now(), ack: 0 }); send(f); };
	const onAck = sync.onAck.bind(sync);
	sync.onAck = (m) => { const s = B.saves.find((x) => x.id === m.id && !x.ack); if (s) s.ack = performance.now(); onAck(m); };
	const onUpdated = sync.onUpdated.bind(sync);
	sync.onUpdated = (d) => { const t0 = performance.now(); onUpdated(d); B.remote.push(performance.now() - t0); };
	return true;
})()`

// benchFigures are what a page recorded: save round trips (send to ack)
// of saves that carry keystrokes, keystroke to the ack of the save that
// carries it, keystroke to frame, and draft.updated apply times.
type benchFigures struct {
	SaveAck []float64 `json:"saveAck"`
	KeyAck  []float64 `json:"keyAck"`
	Frames  []float64 `json:"frames"`
	Remote  []float64 `json:"remote"`
	Unacked int       `json:"unacked"`
	Keys    int       `json:"keys"`
}

const collect = `(() => {
	const B = window.__bench;
	const out = { saveAck: [], keyAck: [], frames: B.frames, remote: B.remote, unacked: 0, keys: B.keys.length };
	const saves = B.saves.filter((s) => s.ack);
	for (const s of saves) out.saveAck.push(s.ack - s.sent);
	for (const k of B.keys) {
		const s = B.saves.find((x) => x.sent >= k);
		if (!s || !s.ack) { out.unacked++; continue; }
		out.keyAck.push(s.ack - k);
	}
	return out;
})()`

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}

// typeAtHumanSpeed types n characters at the end of block id, one every
// gap (Input.insertText, as a keyboard would), and returns once the last
// save carrying them is acknowledged. The ticker paces the typing like a
// person; it waits for no state.
func typeAtHumanSpeed(ctx context.Context, id string, n int, gap time.Duration) error {
	if err := chromedp.Do(ctx, caretAtEnd(id)); err != nil {
		return err
	}
	tick := time.NewTicker(gap)
	defer tick.Stop()
	for k := 0; k < n; k++ {
		<-tick.C
		ch := string(rune('a' + k%26))
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, input.InsertText, input.InsertTextParams{Text: ch})
			return err
		}))
		if err != nil {
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := chromedp.Run(wctx, chromedp.Poll[any](`(() => { const s = window.folioEditor.sync; return !s.dirty && !s.inflight && s.status().state === 'saved'; })()`, chromedp.WithPollingInterval(20*time.Millisecond)))
	return err
}

// BenchmarkKeystrokeAck10Tabs is what a writer experiences with the
// document open in 10 tabs: one tab types at human speed (a character
// every 150 ms, FOLIO_BENCH_GAP_MS) into a 200-block document while nine
// others have it open and apply every save as a draft.updated. The editor
// saves on its own cadence (one save in flight, the next 1.2 s after an
// edit), as it does for a person. Reported:
//
//	ack-p50-ms, ack-p99-ms    a save carrying keystrokes, sent to draft.ack
//	                          (the budget: p99 < 150 ms)
//	key-ack-p99-ms            a keystroke to the ack of the save that
//	                          carries it (includes the save cadence)
//	frame-p99-ms              a keystroke to the next frame in its tab
//	remote-p99-ms             a draft.updated applied in an idle tab
//
// FOLIO_BENCH_TABS=N opens N tabs; FOLIO_BENCH_WRITERS=N makes N of them
// type at once, each in its own block (the old, heavier load).
func BenchmarkKeystrokeAck10Tabs(b *testing.B) {
	d := startDaemon(b)
	doc := newBigDoc(d, 200)
	tabs, writers, keys := 10, 1, 40
	gap := 150 * time.Millisecond
	if n, err := strconv.Atoi(os.Getenv("FOLIO_BENCH_TABS")); err == nil && n > 0 {
		tabs = n
	}
	if n, err := strconv.Atoi(os.Getenv("FOLIO_BENCH_WRITERS")); err == nil && n > 0 {
		writers = min(n, tabs)
	}
	if n, err := strconv.Atoi(os.Getenv("FOLIO_BENCH_GAP_MS")); err == nil && n > 0 {
		gap = time.Duration(n) * time.Millisecond
	}
	ctxs := make([]context.Context, tabs)
	for i := range ctxs {
		ctxs[i] = openDoc(b, d, doc)
		must(b, ctxs[i], eval(instrument))
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		var wg sync.WaitGroup
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := typeAtHumanSpeed(ctxs[i], fmt.Sprintf("p%d", i*20), keys, gap); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	var all benchFigures
	for i, ctx := range ctxs {
		f := get(b, ctx, chromedp.Evaluate[benchFigures](collect))
		if i < writers {
			all.SaveAck = append(all.SaveAck, f.SaveAck...)
			all.KeyAck = append(all.KeyAck, f.KeyAck...)
			all.Frames = append(all.Frames, f.Frames...)
			all.Unacked += f.Unacked
			all.Keys += f.Keys
		} else {
			all.Remote = append(all.Remote, f.Remote...)
		}
	}
	if all.Keys < keys*writers*b.N || all.Unacked > 0 || len(all.SaveAck) == 0 {
		b.Fatalf("%d keystrokes seen of %d, %d without an ack, %d saves acknowledged", all.Keys, keys*writers*b.N, all.Unacked, len(all.SaveAck))
	}
	b.ReportMetric(pct(all.SaveAck, 50), "ack-p50-ms")
	b.ReportMetric(pct(all.SaveAck, 99), "ack-p99-ms")
	b.ReportMetric(pct(all.KeyAck, 50), "key-ack-p50-ms")
	b.ReportMetric(pct(all.KeyAck, 99), "key-ack-p99-ms")
	b.ReportMetric(pct(all.Frames, 99), "frame-p99-ms")
	b.ReportMetric(pct(all.Remote, 99), "remote-p99-ms")
	b.ReportMetric(float64(len(all.SaveAck)), "saves")
}

// BenchmarkHeapLongSession types at human speed in one tab of a 200-block
// document while a second tab types in another block (remote updates to
// the first), for FOLIO_BENCH_HEAP_MINUTES minutes (default 5;
// FOLIO_BENCH_HOUR=1 runs the hour of the budget). Every 30 s it collects
// garbage in the first tab and reads its JavaScript heap. Reported:
// heap-start-MB, heap-end-MB and heap-growth-KB/min (the least-squares
// slope of the samples after the first minute: near 0 when the heap does
// not grow without bound).
func BenchmarkHeapLongSession(b *testing.B) {
	minutes := 5.0
	if v, err := strconv.ParseFloat(os.Getenv("FOLIO_BENCH_HEAP_MINUTES"), 64); err == nil && v > 0 {
		minutes = v
	}
	if os.Getenv("FOLIO_BENCH_HOUR") != "" {
		minutes = 60
	}
	d := startDaemon(b)
	doc := newBigDoc(d, 200)
	writer := openDoc(b, d, doc)
	other := openDoc(b, d, doc)
	heap := func() float64 {
		var used float64
		must(b, writer, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
				return err
			}
			r, err := cdp.Call(ctx, tg, runtime.GetHeapUsage, cdp.Empty{})
			used = r.UsedSize
			return err
		}))
		return used
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		start := time.Now()
		end := start.Add(time.Duration(minutes * float64(time.Minute)))
		type sample struct{ min, bytes float64 }
		samples := []sample{{0, heap()}}
		for round := 0; time.Now().Before(end); round++ {
			// 30 s of typing: the writer in its block, the other tab in
			// another block; a new paragraph now and then (Enter).
			var wg sync.WaitGroup
			for i, ctx := range []context.Context{writer, other} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := fmt.Sprintf("p%d", 10+i*100)
					if err := typeAtHumanSpeed(ctx, id, 150, 180*time.Millisecond); err != nil {
						b.Error(err)
					}
				}()
			}
			wg.Wait()
			if b.Failed() {
				return
			}
			samples = append(samples, sample{time.Since(start).Minutes(), heap()})
		}
		var xs, ys []float64
		for _, s := range samples {
			if s.min >= 1 || minutes < 2 {
				xs = append(xs, s.min)
				ys = append(ys, s.bytes)
			}
		}
		b.ReportMetric(samples[0].bytes/(1<<20), "heap-start-MB")
		b.ReportMetric(samples[len(samples)-1].bytes/(1<<20), "heap-end-MB")
		b.ReportMetric(slope(xs, ys)/1024, "heap-growth-KB/min")
		for _, s := range samples {
			b.Logf("minute %.1f: heap %.2f MB", s.min, s.bytes/(1<<20))
		}
	}
}

// slope is the least-squares slope of y over x.
func slope(x, y []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var num, den float64
	for i := range x {
		num += (x[i] - mx) * (y[i] - my)
		den += (x[i] - mx) * (x[i] - mx)
	}
	return num / den
}
