package syncproto

import (
	"sync"
	"testing"
	"time"
)

// TestWorkersNeverQueue: every function runs at once, however many are
// running (they all wait for each other here), and afterwards no more
// than maxIdleWorkers goroutines stay.
func TestWorkersNeverQueue(t *testing.T) {
	var p workers
	const n = 3 * maxIdleWorkers
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		p.run(func() {
			started.Done()
			release.Wait()
			done.Done()
		})
	}
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatal("a function waited for a worker")
	}
	release.Done()
	done.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		idle := len(p.idle)
		p.mu.Unlock()
		if idle == maxIdleWorkers {
			break
		}
		if idle > maxIdleWorkers || time.Now().After(deadline) {
			t.Fatalf("%d idle workers, want %d", idle, maxIdleWorkers)
		}
		time.Sleep(time.Millisecond)
	}
	// An idle worker takes the next function.
	ran := make(chan struct{})
	p.run(func() { close(ran) })
	<-ran
}
