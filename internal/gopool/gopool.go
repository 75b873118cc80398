package gopool

import "sync"

// Pool runs functions on goroutines that outlive them. The zero Pool is
// ready to use.
//
// Run never makes a function wait for another: it takes an idle worker
// or starts one. A worker that finishes waits for the next function
// unless MaxIdle workers already wait, so the goroutines kept are those
// of the peak concurrency, at most MaxIdle of them idle.
type Pool struct {
	// MaxIdle bounds the idle workers (default 64).
	MaxIdle int

	mu   sync.Mutex
	idle []chan func() // LIFO: the most recently used worker is the warmest
}

// Run runs fn on an idle worker, or on a new one.
func (p *Pool) Run(fn func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		ch := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		ch <- fn // buffered: the worker is waiting or about to
		return
	}
	p.mu.Unlock()
	ch := make(chan func(), 1)
	ch <- fn
	go p.work(ch)
}

// Idle returns the number of idle workers.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

func (p *Pool) maxIdle() int {
	if p.MaxIdle > 0 {
		return p.MaxIdle
	}
	return 64
}

func (p *Pool) work(ch chan func()) {
	for fn := range ch {
		fn()
		p.mu.Lock()
		if len(p.idle) >= p.maxIdle() {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, ch)
		p.mu.Unlock()
	}
}
