package task

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkNoopTasks pushes b.N durable no-op tasks through enqueue -> run
// -> succeed (three synced batches each) with 8 concurrent producers and 1
// or 8 workers. It reports tasks/s and the p99 queue latency (from the
// enqueue to the handler's start). bench/taskbench prints the same figures
// as a table.
func BenchmarkNoopTasks(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			db := openDB(b, b.TempDir())
			defer db.Close()
			r, err := Open(db, Options{Concurrency: workers})
			if err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			lat := make([]time.Duration, 0, b.N)
			var done atomic.Int64
			finished := make(chan struct{})
			r.testHook = func(p string, _ Task) {
				if p == "commit:"+EventSucceeded && done.Add(1) == int64(b.N) {
					close(finished)
				}
			}
			r.Register("noop", func(ctx context.Context, t *Task) error {
				d := time.Since(t.CreatedAt)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
				return nil
			}, KindOptions{})
			ctx := context.Background()
			if err := r.Start(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			var next atomic.Int64
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						if _, _, err := r.Enqueue(ctx, Spec{Kind: "noop"}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			<-finished
			elapsed := time.Since(start)
			b.StopTimer()
			r.Close(ctx)
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tasks/s")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-queue-ms")
		})
	}
}
