package repo

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user + system) this process has used: unlike
// wall time it does not grow when other work shares the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// buildHistory gives docs documents of 60 blocks versions versions each:
// every version edits two blocks and inserts one, as an editor's
// checkpoints do.
func buildHistory(tb testing.TB, r *Repo, docs, versions int) {
	tb.Helper()
	for d := 0; d < docs; d++ {
		doc := create(tb, r, 60)
		seq := uint64(1)
		for v := 1; v < versions; v++ {
			a := para(fmt.Sprintf("b%d", (v*7)%60), fmt.Sprintf("edit %d", v))
			c := para(fmt.Sprintf("b%d", (v*13)%60), fmt.Sprintf("edit %d", v))
			n := para(fmt.Sprintf("n%d", v), fmt.Sprintf("new %d", v))
			res := save(tb, r, doc, seq, a, c, n)
			seq = res.Seq
			if _, _, err := r.Seal(ctx, doc, "idle", "ana"); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// BenchmarkFsck measures fsck of 4 documents with 840 versions each (the
// shape that took 66 s), BenchmarkFsckWide of 400 documents with 30.
func BenchmarkFsck(b *testing.B)     { benchFsck(b, 4, 840) }
func BenchmarkFsckWide(b *testing.B) { benchFsck(b, 400, 30) }

func benchFsck(b *testing.B, docs, versions int) {
	r := newRepo(b)
	buildHistory(b, r, docs, versions)
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		rep, err := r.Fsck(ctx, FsckOptions{})
		if err != nil || !rep.OK {
			b.Fatal(err, rep.Problems)
		}
	}
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkGC measures a collection that removes the content of 30,000
// rejected drafts' blocks (dead objects) from a store with live history.
func BenchmarkGC(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := newRepo(b)
		buildHistory(b, r, 2, 50)
		doc := create(b, r, 1)
		seq := uint64(1)
		// 300 saves of 100 fresh blocks each, every one overwritten by the
		// next: their contents are reachable from nothing once sealed.
		for s := 0; s < 300; s++ {
			var blocks []DraftChange
			for k := 0; k < 100; k++ {
				blk := para(fmt.Sprintf("b%d", k), fmt.Sprintf("draft %d.%d", s, k))
				blocks = append(blocks, DraftChange{Op: ChangeUpsert, Block: &blk})
			}
			res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: blocks})
			if err != nil {
				b.Fatal(err)
			}
			seq = res.Seq
		}
		b.StartTimer()
		cpu := cpuTime()
		rep, err := r.GC(ctx, GCOptions{Prune: -1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric((cpuTime() - cpu).Seconds(), "cpu-s/op")
		b.ReportMetric(float64(rep.Removed), "removed")
	}
}
