package gopool

import (
	"sync"
	"testing"
	"time"
)

// TestNeverQueue: every function runs at once, however many are running
// (they all wait for each other here), and afterwards no more than
// MaxIdle goroutines stay.
func TestNeverQueue(t *testing.T) {
	const maxIdle = 16
	p := Pool{MaxIdle: maxIdle}
	const n = 3 * maxIdle
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		p.Run(func() {
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
		idle := p.Idle()
		if idle == maxIdle {
			break
		}
		if idle > maxIdle || time.Now().After(deadline) {
			t.Fatalf("%d idle workers, want %d", idle, maxIdle)
		}
		time.Sleep(time.Millisecond)
	}
	// An idle worker takes the next function.
	ran := make(chan struct{})
	p.Run(func() { close(ran) })
	<-ran
}
