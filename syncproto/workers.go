package syncproto

import "sync"

// workers runs each frame's handling on a goroutine that outlives it.
//
// Handling a frame goes deep (decoding, validation, a save down to the
// store's commit) while a connection's read loop, which lives as long as
// the connection, only needs a shallow stack. So the read loop hands each
// frame to a worker and waits for it. A new goroutine would start with a
// small stack and grow it by copying three or four times per frame; a
// worker keeps the stack it grew for the next frame. A frame never waits
// for a free worker (one is made when none is idle), and at most maxIdle
// workers stay idle: the stacks kept are those of the server's peak
// concurrency, bounded, not one per connection.
type workers struct {
	mu   sync.Mutex
	idle []chan func() // LIFO: the most recently used worker is the warmest
}

const maxIdleWorkers = 64

// run runs fn on an idle worker, or on a new one.
func (p *workers) run(fn func()) {
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

func (p *workers) work(ch chan func()) {
	for fn := range ch {
		fn()
		p.mu.Lock()
		if len(p.idle) >= maxIdleWorkers {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, ch)
		p.mu.Unlock()
	}
}
