// Package gopool runs short functions that go deep (a request's handling,
// a store commit) on pooled goroutines.
//
// A new goroutine starts with a small stack and grows it by copying as
// the work goes down the call tree; a goroutine keeps the largest stack
// it grew until the garbage collector shrinks it. Work that runs often
// and deep on fresh goroutines pays the growth every time, and work on a
// long-lived goroutine (a connection's read loop) leaves that goroutine
// with a large stack for its whole life. A Pool's workers keep their
// stacks between functions, and only as many of them stay as the peak
// concurrency needed, bounded by MaxIdle.
package gopool
