package repo

import (
	"context"
	"sync"
)

// docLocks serializes the changes to each document with one lock per
// document id. A lock exists while someone holds or waits for it, so two
// documents never share one: a long change to one document cannot delay
// another (a striped table would let any two ids that hash alike wait on
// each other, and such pairs are easy to find).
type docLocks struct {
	mu sync.Mutex          // guards m and every docLock.users
	m  map[string]*docLock // live locks by document id
}

type docLock struct {
	token chan struct{} // holds one value while the document is locked
	users int           // holders and waiters; the lock is dropped at 0
}

// lock takes doc's lock, waiting at most until ctx is done. It returns
// the func that releases it.
func (l *docLocks) lock(ctx context.Context, doc string) (func(), error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*docLock{}
	}
	dl := l.m[doc]
	if dl == nil {
		dl = &docLock{token: make(chan struct{}, 1)}
		l.m[doc] = dl
	}
	dl.users++
	l.mu.Unlock()

	done := func() {
		l.mu.Lock()
		if dl.users--; dl.users == 0 {
			delete(l.m, doc)
		}
		l.mu.Unlock()
	}
	var cancel <-chan struct{}
	if ctx != nil {
		cancel = ctx.Done()
	}
	select {
	case dl.token <- struct{}{}:
	case <-cancel:
		done()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, context.Canceled
	}
	return func() {
		<-dl.token
		done()
	}, nil
}

// busy reports whether someone holds or waits for doc's lock: a hint,
// stale as soon as it is returned.
func (l *docLocks) busy(doc string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[doc] != nil
}
