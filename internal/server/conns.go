package server

import (
	"container/list"
	"context"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/foliodev/folio/internal/auth"
)

// Connection limits. A client that opens connections and then sends
// nothing, or sends slowly, holds a file descriptor for each; without a
// cap enough of them exhaust the process's descriptors and accept fails
// for everyone, /healthz included. An authenticated client could do the
// same with connections it keeps busy, so authentication buys protection
// only within a share.
//
// gate caps the connections open at once, in all and per client address.
// A connection is untrusted from accept until a request on it
// authenticates (trust); it then becomes trusted if its token, its user
// and (for non-admins) all non-admin users together are within their
// shares (gateLimits), and otherwise stays untrusted. When a new
// connection would break a cap, a connection in the cap's scope (the
// whole server, or that address) is closed to make room: the oldest
// untrusted one, else the one of the trusted ones that has waited longest
// for its next request (idle keep-alive; its client reconnects). A flood
// of idle, slow or over-share connections thus cycles among itself, while
// a fresh connection that sends its request at once (a health probe, an
// editor presenting its token) gets through. Only when the scope holds
// nothing but trusted connections in the middle of a request is the new
// one refused: it gets a fixed 503 answer and is closed, without reading
// anything. Because non-admin trusted connections hold at most max −
// adminShare places, that can happen to an admin only when admins
// themselves keep the reserved places busy.
type gate struct {
	lim gateLimits
	m   *metrics

	mu        sync.Mutex // guards the fields below and every gatedConn's elements
	total     int
	shared    int // trusted connections of non-admins
	addrs     map[string]*addrConns
	tokens    map[string]int // trusted connections per token id
	users     map[string]int // trusted connections per user id
	untrusted list.List      // of *gatedConn, oldest first
	idle      list.List      // of trusted *gatedConn between requests, longest idle first
	changed   chan struct{}  // closed at the next change of state, when someone waits (await)
}

// gateLimits are a gate's caps; 0: no cap.
type gateLimits struct {
	max      int // connections in all
	perAddr  int // connections per client address
	perToken int // trusted connections per token
	perUser  int // trusted connections per user
	// adminShare places of max are kept from non-admins' trusted
	// connections: at most max − adminShare of them are trusted.
	adminShare int
}

// addrConns are the connections of one client address.
type addrConns struct {
	n         int
	untrusted list.List // of *gatedConn, oldest first
	idle      list.List // of trusted *gatedConn between requests, longest idle first
}

func newGate(lim gateLimits, m *metrics) *gate {
	return &gate{lim: lim, m: m, addrs: map[string]*addrConns{}, tokens: map[string]int{}, users: map[string]int{}}
}

// gatedConn is an admitted connection. Close releases its place once.
type gatedConn struct {
	net.Conn
	g    *gate
	addr string
	// Guarded by g.mu. elem and addrElem are its places in the untrusted
	// lists while untrusted, in the idle lists while trusted and between
	// requests, nil otherwise. token and user are those it is trusted
	// for (trusted set). idle is what the HTTP server last said.
	// released is set once its place is given back.
	elem, addrElem *list.Element
	trusted, admin bool
	idle           bool
	token, user    string
	released       bool
	closeOnce      sync.Once
	closeErr       error
}

// refusal is what a connection over the caps gets before it is closed.
var refusal = []byte("HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 119\r\n\r\n" +
	`{"error":{"code":"unavailable","message":"too many connections to this daemon (or from your address); retry shortly"}}` + "\n")

// victim is the connection to close to make room in a scope whose lists
// are untrusted and idle: the oldest untrusted one, else the longest idle
// trusted one; never one of skip. nil: nothing in the scope may go.
func victim(untrusted, idle *list.List, skip []*gatedConn) *gatedConn {
	for _, l := range []*list.List{untrusted, idle} {
		for e := l.Front(); e != nil; e = e.Next() {
			if v := e.Value.(*gatedConn); !slices.Contains(skip, v) {
				return v
			}
		}
	}
	return nil
}

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
	if g.lim.perAddr > 0 && a.n >= g.lim.perAddr {
		v := victim(&a.untrusted, &a.idle, nil)
		if v == nil {
			g.forget(addr, a)
			g.m.connRefused.WithLabelValues("per_address").Inc()
			return nil, nil
		}
		evict = append(evict, v)
	}
	if g.lim.max > 0 && g.total-len(evict) >= g.lim.max {
		v := victim(&g.untrusted, &g.idle, evict)
		if v == nil {
			g.forget(addr, a)
			g.m.connRefused.WithLabelValues("total").Inc()
			return nil, nil
		}
		evict = append(evict, v)
	}
	for _, v := range evict {
		state := "untrusted"
		if v.trusted {
			state = "idle"
		}
		g.releaseLocked(v)
		g.m.connEvicted.WithLabelValues(state).Inc()
	}
	gc := &gatedConn{Conn: c, g: g, addr: addr}
	g.total++
	a.n++
	gc.elem = g.untrusted.PushBack(gc)
	gc.addrElem = a.untrusted.PushBack(gc)
	g.m.connections.WithLabelValues("untrusted").Inc()
	g.notifyLocked()
	return gc, evict
}

// forget drops the record of an address that holds no connection.
func (g *gate) forget(addr string, a *addrConns) {
	if a.n == 0 {
		delete(g.addrs, addr)
	}
}

// unlinkLocked takes c out of the list it is in (untrusted or idle).
func (g *gate) unlinkLocked(c *gatedConn) {
	if c.elem == nil {
		return
	}
	a := g.addrs[c.addr]
	if c.trusted {
		g.idle.Remove(c.elem)
		a.idle.Remove(c.addrElem)
	} else {
		g.untrusted.Remove(c.elem)
		a.untrusted.Remove(c.addrElem)
	}
	c.elem, c.addrElem = nil, nil
}

// releaseLocked gives c's place back; g.mu is held.
func (g *gate) releaseLocked(c *gatedConn) {
	if c.released {
		return
	}
	c.released = true
	g.unlinkLocked(c)
	state := "untrusted"
	if c.trusted {
		state = "trusted"
		g.tokens[c.token]--
		if g.tokens[c.token] == 0 {
			delete(g.tokens, c.token)
		}
		g.users[c.user]--
		if g.users[c.user] == 0 {
			delete(g.users, c.user)
		}
		if !c.admin {
			g.shared--
		}
	}
	a := g.addrs[c.addr]
	g.total--
	a.n--
	g.forget(c.addr, a)
	g.m.connections.WithLabelValues(state).Dec()
	g.notifyLocked()
}

// trust marks c as a connection of the authenticated client p: it is
// pushed out to make room for others only while it waits for its next
// request. Over p's token's or user's share, or the non-admins' share, it
// stays untrusted.
func (c *gatedConn) trust(p auth.Principal) {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.released || c.trusted {
		return
	}
	over := ""
	switch {
	case g.lim.perToken > 0 && g.tokens[p.TokenID] >= g.lim.perToken:
		over = "per_token"
	case g.lim.perUser > 0 && g.users[p.UserID] >= g.lim.perUser:
		over = "per_user"
	case !p.Admin && g.lim.max > 0 && g.shared >= g.lim.max-g.lim.adminShare:
		over = "authors"
	}
	if over != "" {
		g.m.connOverShare.WithLabelValues(over).Inc()
		return
	}
	g.unlinkLocked(c)
	c.trusted, c.admin, c.token, c.user = true, p.Admin, p.TokenID, p.UserID
	g.tokens[c.token]++
	g.users[c.user]++
	if !c.admin {
		g.shared++
	}
	if c.idle {
		c.markIdleLocked()
	}
	g.m.connections.WithLabelValues("untrusted").Dec()
	g.m.connections.WithLabelValues("trusted").Inc()
	g.notifyLocked()
}

// setIdle records whether the HTTP server waits for c's next request
// (http.Server.ConnState): a trusted connection that waits is the first
// of its kind to go when room is needed.
func (c *gatedConn) setIdle(idle bool) {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.released || c.idle == idle {
		return
	}
	c.idle = idle
	if !c.trusted {
		return
	}
	if idle {
		c.markIdleLocked()
	} else {
		g.unlinkLocked(c)
	}
	g.notifyLocked()
}

// markIdleLocked puts the trusted connection c at the end of the idle lists.
func (c *gatedConn) markIdleLocked() {
	if c.elem == nil {
		c.elem = c.g.idle.PushBack(c)
		c.addrElem = c.g.addrs[c.addr].idle.PushBack(c)
	}
}

// notifyLocked wakes those waiting in await.
func (g *gate) notifyLocked() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// gateState is a snapshot of a gate's counts.
type gateState struct {
	total, untrusted, idle, shared int
	users                          map[string]int
}

// await returns once cond holds for the gate's state, or ctx is done.
func (g *gate) await(ctx context.Context, cond func(gateState) bool) error {
	for {
		g.mu.Lock()
		st := gateState{total: g.total, untrusted: g.untrusted.Len(), idle: g.idle.Len(), shared: g.shared, users: maps.Clone(g.users)}
		if cond(st) {
			g.mu.Unlock()
			return nil
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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

// trustConn marks the connection ctx was served on as authenticated by p.
func trustConn(ctx context.Context, p auth.Principal) {
	if gc, ok := ctx.Value(connKey{}).(*gatedConn); ok {
		gc.trust(p)
	}
}

// connState tells the gate when a connection waits for its next request
// (http.Server.ConnState).
func connState(c net.Conn, st http.ConnState) {
	if gc, ok := c.(*gatedConn); ok && (st == http.StateIdle || st == http.StateActive || st == http.StateHijacked) {
		gc.setIdle(st == http.StateIdle)
	}
}

// requestAddr is clientAddr of the client r came from.
func requestAddr(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return clientAddr(net.TCPAddrFromAddrPort(ap))
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
