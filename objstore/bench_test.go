package objstore_test

import (
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// BenchmarkCheckpointStore is the storage half of issue 2's comparison with
// git: 1,000 checkpoints of a 200-block document, 1-3 blocks changed each,
// one synced batch per checkpoint. It reports bytes on disk per checkpoint
// after compaction and checkpoints per second, next to the rate of bare
// synced one-key batches on the same disk.
func BenchmarkCheckpointStore(b *testing.B) {
	for i := 0; i < b.N; i++ {
		res := simulateCheckpoints(b, 1000)
		b.ReportMetric(float64(res.TableBytes)/float64(res.N), "B/checkpoint")
		b.ReportMetric(float64(res.DirBytes)/float64(res.N), "dirB/checkpoint")
		b.ReportMetric(float64(res.N)/res.Elapsed.Seconds(), "checkpoints/s")
		b.ReportMetric(syncedBatchRate(b), "bare-synced-batches/s")
	}
}

// syncedBatchRate measures one-key synced batches per second.
func syncedBatchRate(tb testing.TB) float64 {
	db := openDB(tb)
	const n = 500
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := db.Set(kv.Uint64([]byte("t/x/"), uint64(i)), []byte("v"), kv.Sync); err != nil {
			tb.Fatal(err)
		}
	}
	return n / time.Since(start).Seconds()
}

// BenchmarkGetVersion reads a version of a 200-block document at the end
// of a full delta chain, with a cold cache (every delta applied and
// checked) and with its parent cached (one delta).
func BenchmarkGetVersion(b *testing.B) {
	db := openDB(b)
	st := objstore.New(db)
	h := writeHistory(b, db, st, objstore.DefaultDeltaInterval, 200, 1)
	last := h.versions[len(h.versions)-1]
	b.Run("cold-chain", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cold := objstore.NewWithOptions(db, objstore.Options{CacheBytes: -1})
			if _, _, err := cold.Get(last); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parent-cached", func(b *testing.B) {
		b.StopTimer()
		for i := 0; i < b.N; i++ {
			warm := objstore.New(db)
			if _, _, err := warm.Get(h.versions[len(h.versions)-2]); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, _, err := warm.Get(last); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
		}
	})
	b.Run("txn", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := st.GetTxn(h.txns[len(h.txns)-1]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
