package server

import (
	"container/list"
	"context"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Connection limits. A client that opens connections and then sends
// nothing, or sends slowly, holds a file descriptor for each; without a
// cap enough of them exhaust the process's descriptors and accept fails
// for everyone, /healthz included.
//
// gate caps the connections open at once, in all and per client address.
// A connection is untrusted from accept until a request on it
// authenticates (trust); trusted connections are never pushed out. When a
// new connection would break a cap, the oldest untrusted connection in the
// cap's scope (the whole server, or that address) is closed to make room:
// a flood of idle or slow unauthenticated connections thus cycles among
// itself, while a fresh connection that sends its request at once (a
// health probe, an editor presenting its token) gets through. Only when
// the scope holds nothing but trusted connections is the new one refused:
// it gets a fixed 503 answer and is closed, without reading anything.
type gate struct {
	max     int // connections in all; 0: no cap
	perAddr int // connections per client address; 0: no cap
	m       *metrics

	mu        sync.Mutex // guards the fields below and every gatedConn's elements
	total     int
	addrs     map[string]*addrConns
	untrusted list.List // of *gatedConn, oldest first
}

// addrConns are the connections of one client address.
type addrConns struct {
	n         int
	untrusted list.List // of *gatedConn, oldest first
}

func newGate(max, perAddr int, m *metrics) *gate {
	return &gate{max: max, perAddr: perAddr, m: m, addrs: map[string]*addrConns{}}
}

// gatedConn is an admitted connection. Close releases its place once.
type gatedConn struct {
	net.Conn
	g    *gate
	addr string
	// elem and addrElem are its places in the untrusted lists; nil once
	// trusted or released. released is set once its place is given back.
	// All three are guarded by g.mu.
	elem, addrElem *list.Element
	released       bool
	closeOnce      sync.Once
	closeErr       error
}

// refusal is what a connection over the caps gets before it is closed.
var refusal = []byte("HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 119\r\n\r\n" +
	`{"error":{"code":"unavailable","message":"too many connections to this daemon (or from your address); retry shortly"}}` + "\n")

// admit places c or refuses it. It returns the connections to close to
// make room, and nil for g when c is refused.
func (g *gate) admit(c net.Conn) (*gatedConn, []*gatedConn) {
	addr := clientAddr(c.RemoteAddr())
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.addrs[addr]
	if a == nil {
		a = &addrConns{}
		g.addrs[addr] = a
	}
	var evict []*gatedConn
	if g.perAddr > 0 && a.n >= g.perAddr {
		front := a.untrusted.Front()
		if front == nil {
			g.forget(addr, a)
			g.m.connRefused.WithLabelValues("per_address").Inc()
			return nil, nil
		}
		evict = append(evict, front.Value.(*gatedConn))
	}
	if g.max > 0 && g.total-len(evict) >= g.max {
		var victim *gatedConn
		for e := g.untrusted.Front(); e != nil; e = e.Next() {
			if v := e.Value.(*gatedConn); len(evict) == 0 || v != evict[0] {
				victim = v
				break
			}
		}
		if victim == nil {
			g.forget(addr, a)
			g.m.connRefused.WithLabelValues("total").Inc()
			return nil, nil
		}
		evict = append(evict, victim)
	}
	for _, v := range evict {
		g.releaseLocked(v)
		g.m.connEvicted.Inc()
	}
	gc := &gatedConn{Conn: c, g: g, addr: addr}
	g.total++
	a.n++
	gc.elem = g.untrusted.PushBack(gc)
	gc.addrElem = a.untrusted.PushBack(gc)
	g.m.connections.WithLabelValues("untrusted").Inc()
	return gc, evict
}

// forget drops the record of an address that holds no connection.
func (g *gate) forget(addr string, a *addrConns) {
	if a.n == 0 {
		delete(g.addrs, addr)
	}
}

// releaseLocked gives c's place back; g.mu is held.
func (g *gate) releaseLocked(c *gatedConn) {
	if c.released {
		return
	}
	c.released = true
	state := "trusted"
	if c.elem != nil {
		state = "untrusted"
		g.untrusted.Remove(c.elem)
		c.elem = nil
	}
	a := g.addrs[c.addr]
	if c.addrElem != nil {
		a.untrusted.Remove(c.addrElem)
		c.addrElem = nil
	}
	g.total--
	a.n--
	g.forget(c.addr, a)
	g.m.connections.WithLabelValues(state).Dec()
}

// trust marks c as a connection of an authenticated client: it is not
// pushed out to make room for others any more.
func (c *gatedConn) trust() {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.released || c.elem == nil {
		return
	}
	g.untrusted.Remove(c.elem)
	c.elem = nil
	g.addrs[c.addr].untrusted.Remove(c.addrElem)
	c.addrElem = nil
	g.m.connections.WithLabelValues("untrusted").Dec()
	g.m.connections.WithLabelValues("trusted").Inc()
}

// Close closes the connection and gives its place back.
func (c *gatedConn) Close() error {
	c.closeOnce.Do(func() {
		c.g.mu.Lock()
		c.g.releaseLocked(c)
		c.g.mu.Unlock()
		c.closeErr = c.Conn.Close()
	})
	return c.closeErr
}

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes one it answered with "Connection: close".
func (c *gatedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// gatedListener admits the connections of its listener through a gate.
type gatedListener struct {
	net.Listener
	g *gate
}

// Accept returns the next admitted connection; refused ones are answered
// and closed here, without reaching the HTTP server.
func (l *gatedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		gc, evict := l.g.admit(c)
		for _, v := range evict {
			v.Conn.Close() // its place is released already; the server sees a read error
		}
		if gc != nil {
			return gc, nil
		}
		// The answer fits in a fresh socket's send buffer, so this write
		// does not wait for the client; the deadline is a safeguard.
		_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_, _ = c.Write(refusal)
		c.Close()
	}
}

// connKey keys the request context's *gatedConn (http.Server.ConnContext).
type connKey struct{}

func withConn(ctx context.Context, c net.Conn) context.Context {
	if gc, ok := c.(*gatedConn); ok {
		return context.WithValue(ctx, connKey{}, gc)
	}
	return ctx
}

// trustConn marks the connection ctx was served on as authenticated.
func trustConn(ctx context.Context) {
	if gc, ok := ctx.Value(connKey{}).(*gatedConn); ok {
		gc.trust()
	}
}

// clientAddr is the address a connection is counted against: its IP, or
// for IPv6 its /64 (one host commonly has a whole /64 to pick from).
func clientAddr(a net.Addr) string {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return a.String()
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}
