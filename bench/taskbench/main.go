package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/task"
)

func main() {
	n := flag.Int("n", 10000, "tasks per run")
	workers := flag.String("workers", "1,8", "comma-separated worker counts (Runner concurrency)")
	producers := flag.Int("producers", 8, "goroutines enqueueing concurrently")
	rate := flag.Float64("rate", 0, "offered load in tasks/s (0: enqueue as fast as possible)")
	dir := flag.String("dir", "", "data directory (default: a fresh temporary one per run)")
	flag.Parse()
	offered := "as fast as possible"
	if *rate > 0 {
		offered = fmt.Sprintf("%.0f tasks/s offered", *rate)
	}
	fmt.Printf("# %d tasks per run, %d producers, %s, GOMAXPROCS %d, %s\n", *n, *producers, offered, runtime.GOMAXPROCS(0), loadavg())
	fmt.Printf("%-8s %10s %12s %12s %12s\n", "workers", "tasks/s", "p50 queue", "p99 queue", "elapsed")
	for _, w := range strings.Split(*workers, ",") {
		wn, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || wn <= 0 {
			fmt.Fprintf(os.Stderr, "taskbench: bad worker count %q\n", w)
			os.Exit(2)
		}
		d := *dir
		if d == "" {
			if d, err = os.MkdirTemp("", "taskbench"); err != nil {
				fmt.Fprintln(os.Stderr, "taskbench:", err)
				os.Exit(1)
			}
			defer os.RemoveAll(d)
		}
		res, err := run(d, *n, wn, *producers, *rate)
		if err != nil {
			fmt.Fprintln(os.Stderr, "taskbench:", err)
			os.Exit(1)
		}
		fmt.Printf("%-8d %10.0f %12s %12s %12s\n", wn, float64(*n)/res.elapsed.Seconds(),
			res.pct(50).Round(time.Microsecond), res.pct(99).Round(time.Microsecond), res.elapsed.Round(time.Millisecond))
	}
}

type result struct {
	elapsed time.Duration
	lat     []time.Duration
}

func (r result) pct(p int) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, len(r.lat)*p/100)]
}

func run(dir string, n, workers, producers int, rate float64) (result, error) {
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	r, err := task.Open(db, task.Options{Concurrency: workers})
	if err != nil {
		return result{}, err
	}
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	var done atomic.Int64
	finished := make(chan struct{})
	r.Register("noop", func(ctx context.Context, t *task.Task) error {
		d := time.Since(t.CreatedAt)
		mu.Lock()
		lat = append(lat, d)
		mu.Unlock()
		return nil
	}, task.KindOptions{})
	ctx := context.Background()
	if err := r.Start(ctx); err != nil {
		return result{}, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	errc := make(chan error, producers)
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if rate > 0 {
					time.Sleep(time.Until(start.Add(time.Duration(float64(i-1) / rate * float64(time.Second)))))
				}
				t, _, err := r.Enqueue(ctx, task.Spec{Kind: "noop"})
				if err != nil {
					errc <- err
					return
				}
				go func(id task.ID) {
					for range r.Events(ctx, id, 2) {
					}
					if done.Add(1) == int64(n) {
						close(finished)
					}
				}(t.ID)
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errc:
		return result{}, err
	default:
	}
	<-finished
	elapsed := time.Since(start)
	if err := r.Close(ctx); err != nil {
		return result{}, err
	}
	slices.Sort(lat)
	return result{elapsed: elapsed, lat: lat}, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	f := strings.Fields(string(b))
	return "load " + strings.Join(f[:3], " ")
}
