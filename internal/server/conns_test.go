package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
	dto "github.com/prometheus/client_model/go"
)

// served is an env whose Server serves a real loopback listener through
// Serve, so connection caps and deadlines are in force.
type served struct {
	*env
	addr string // host:port
	url  string // http://host:port
}

func newServed(t *testing.T, mod func(*Config)) *served {
	t.Helper()
	return newServedWith(t, mod, nil)
}

// newServedWith is newServed with a hook that may change the Server (its
// handler) before it serves.
func newServedWith(t *testing.T, mod func(*Config), prep func(*Server)) *served {
	t.Helper()
	e := newEnv(t, mod)
	if prep != nil {
		prep(e.srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- e.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.srv.Shutdown(ctx)
		<-errc
	})
	return &served{env: e, addr: ln.Addr().String(), url: "http://" + ln.Addr().String()}
}

// dialFrom opens a raw connection to s from local IP from ("" for any).
func (s *served) dialFrom(t *testing.T, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// slowHeaders starts a request whose headers never end (slowloris).
func slowHeaders(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := io.WriteString(c, "POST /v1/docs HTTP/1.1\r\nHost: folio\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
}

// slowBody sends a whole header block without a token and the first bytes
// of a large body, then nothing more.
func slowBody(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := io.WriteString(c, "POST /v1/docs HTTP/1.1\r\nHost: folio\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"attrs\":"); err != nil {
		t.Fatal(err)
	}
}

// closedByServer reports whether the server closed c: reading reaches EOF
// or a reset. It waits at most a generous while, which only a server that
// keeps the connection open exhausts.
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// metricValues scrapes /metrics and returns the value of every series
// whose line starts with prefix, keyed by the whole series name.
func (s *served) metricValues(t *testing.T, prefix string) map[string]float64 {
	t.Helper()
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, _ := strconv.ParseFloat(line[i+1:], 64)
		out[line[:i]] = v
	}
	return out
}

// healthz answers on a fresh connection.
func (s *served) healthz(t *testing.T) int {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get(s.url + "/healthz")
	if err != nil {
		t.Fatalf("healthz: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSlowUnauthenticatedConnectionsAtTwiceTheCap opens twice as many
// slow unauthenticated connections as the cap allows — half that never
// finish their headers, half that trickle a body after their headers —
// and checks that /healthz still answers, that the server holds no more
// than the cap, and that the trickling ones were closed after their 401.
func TestSlowUnauthenticatedConnectionsAtTwiceTheCap(t *testing.T) {
	const limit = 8
	s := newServed(t, func(c *Config) {
		c.MaxConns, c.MaxConnsPerAddr = limit, -1
		c.ReadHeaderTimeout = time.Hour // only the caps may free anything
	})
	var headers, bodies []net.Conn
	for i := 0; i < 2*limit; i++ {
		c := s.dialFrom(t, "")
		if i%2 == 0 {
			slowHeaders(t, c)
			headers = append(headers, c)
		} else {
			slowBody(t, c)
			bodies = append(bodies, c)
		}
	}
	if st := s.healthz(t); st != http.StatusOK {
		t.Fatalf("/healthz with %d slow connections open: %d", 2*limit, st)
	}
	for i, c := range bodies {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("trickling connection %d answered %d, want 401", i, resp.StatusCode)
		}
		if !closedByServer(c) {
			t.Errorf("trickling connection %d is still open after its answer", i)
		}
	}
	conns := s.metricValues(t, "folio_http_connections{")
	held := conns[`folio_http_connections{state="untrusted"}`] + conns[`folio_http_connections{state="trusted"}`]
	if held > limit {
		t.Fatalf("the server holds %v connections, cap %d: %v", held, limit, conns)
	}
	closed := 0
	for _, c := range headers {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
			closed++
		}
	}
	if closed == 0 {
		t.Fatalf("no slow-header connection was closed to make room")
	}
	t.Logf("cap %d: %d slow-header connections pushed out, %v held, /healthz 200", limit, closed, held)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestPerAddressCap floods from one loopback address: that address keeps
// at most its cap, and a client from another address is not affected.
func TestPerAddressCap(t *testing.T) {
	const perAddr = 4
	s := newServed(t, func(c *Config) {
		c.MaxConns, c.MaxConnsPerAddr = 1000, perAddr
		c.ReadHeaderTimeout = time.Hour
	})
	probe, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	if c, err := d.Dial("tcp", s.addr); err != nil {
		t.Skipf("cannot dial from 127.0.0.2 here: %v", err)
	} else {
		c.Close()
	}
	var flood []net.Conn
	for i := 0; i < 3*perAddr; i++ {
		c := s.dialFrom(t, "127.0.0.2")
		slowHeaders(t, c)
		flood = append(flood, c)
	}
	if st := s.healthz(t); st != http.StatusOK {
		t.Fatalf("/healthz from another address: %d", st)
	}
	open := 0
	for _, c := range flood {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); isTimeout(err) {
			open++
		}
	}
	if open > perAddr {
		t.Fatalf("%d connections of one address still open, cap %d", open, perAddr)
	}
}

// TestAuthenticatedConnectionSurvivesFlood: a kept-alive connection on
// which a request authenticated is never pushed out, and when every place
// is held by such connections a new one gets a fast 503.
func TestAuthenticatedConnectionSurvivesFlood(t *testing.T) {
	const limit = 3
	s := newServed(t, func(c *Config) {
		c.MaxConns, c.MaxConnsPerAddr = limit, -1
		c.ReadHeaderTimeout = time.Hour
	})
	whoami := func(hc *http.Client, token string) (int, bool) {
		t.Helper()
		reused := false
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("whoami: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, reused
	}
	ann := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	if st, _ := whoami(ann, s.ann); st != http.StatusOK {
		t.Fatalf("whoami: %d", st)
	}
	for i := 0; i < 3*limit; i++ {
		slowHeaders(t, s.dialFrom(t, ""))
	}
	st, reused := whoami(ann, s.ann)
	if st != http.StatusOK || !reused {
		t.Fatalf("after the flood: status %d, same connection %v", st, reused)
	}
	// The server marks ann's connection idle only after its answer has
	// gone out: wait for that, or the last busy admin finds no place.
	s.gateOf(t, func(st gateState) bool { return st.idle == 1 })
	// Fill every place with authenticated connections in the middle of
	// a request (an admin's, since non-admins hold at most limit − 1
	// protected places; each pushes out an idle one): the next is refused.
	for i := 0; i < limit; i++ {
		if !s.busyAuthed(t, s.admin) {
			t.Fatalf("busy admin connection %d was refused", i)
		}
	}
	c := s.dialFrom(t, "")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("connection over a cap of busy trusted ones: %v %v", resp, err)
	}
	body, _ := io.ReadAll(resp.Body)
	if errOf(t, body).Code != "unavailable" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("refusal: %s %v", body, resp.Header)
	}
	var m dto.Metric
	if err := s.srv.m.connRefused.WithLabelValues("total").Write(&m); err != nil || m.GetCounter().GetValue() < 1 {
		t.Fatalf("refusals counted: %v %v", m.GetCounter().GetValue(), err)
	}
}

// busyAuthed opens a connection and starts on it an authenticated request
// whose body never arrives: the connection is trusted (within its
// shares) and in the middle of a request. It returns once the handler
// has authenticated the request and waits for the body (the server's
// "100 Continue"), and false when the connection was refused or closed.
func (s *served) busyAuthed(t *testing.T, token string) bool {
	t.Helper()
	c := s.dialFrom(t, "")
	fmt.Fprintf(c, "POST /v1/docs HTTP/1.1\r\nHost: folio\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Expect: 100-continue\r\nContent-Length: 100000\r\n\r\n", token)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		return false
	}
	_, err = io.WriteString(c, `{"attrs":`)
	return err == nil
}

// gateOf waits until the gate of s's Serve holds a state for which cond
// is true, and returns it.
func (s *served) gateOf(t *testing.T, cond func(gateState) bool) gateState {
	t.Helper()
	s.srv.httpMu.Lock()
	g := s.srv.gate
	s.srv.httpMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last gateState
	err := g.await(ctx, func(st gateState) bool { last = st; return cond(st) })
	if err != nil {
		t.Fatalf("the connection gate never reached the state waited for; last: %+v", last)
	}
	return last
}

// TestOneAuthorCannotTakeTheDaemonOffline: an author who keeps twice as
// many authenticated connections busy as the whole cap, with two
// tokens, holds protected places only within the per-token and per-user
// shares; a visitor, /healthz and an admin, each on a fresh connection,
// still get answers, and the author's protected connections still work.
func TestOneAuthorCannotTakeTheDaemonOffline(t *testing.T) {
	const limit, perToken, perUser = 16, 4, 6
	s := newServed(t, func(c *Config) {
		c.MaxConns, c.MaxConnsPerAddr = limit, -1
		c.MaxConnsPerToken, c.MaxConnsPerUser, c.AdminConns = perToken, perUser, 2
		c.ReadHeaderTimeout, c.ReadTimeout = time.Hour, time.Hour
	})
	ctx := context.Background()
	second, err := s.auth.AddToken(ctx, "ann", auth.KindFull)
	if err != nil {
		t.Fatal(err)
	}
	annID := s.userID(t, s.ann)
	tokens := []string{s.ann, second.Secret}
	busy := 0
	for i := 0; i < 2*limit; i++ {
		if s.busyAuthed(t, tokens[i%2]) {
			busy++
		}
	}
	if busy != 2*limit {
		t.Fatalf("only %d of the author's %d connections were admitted", busy, 2*limit)
	}
	st := s.gateOf(t, func(gateState) bool { return true })
	if st.users[annID] != perUser || st.total != limit {
		t.Fatalf("gate after the author's connections: %+v (want %d protected of ann's, %d open)", st, perUser, limit)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path, token string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", s.url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := 0; i < 3; i++ {
		if st := get("/v1/public/articles", ""); st != http.StatusOK {
			t.Fatalf("a visitor got %d", st)
		}
		if st := s.healthz(t); st != http.StatusOK {
			t.Fatalf("/healthz got %d", st)
		}
		if st := get("/v1/whoami", s.admin); st != http.StatusOK {
			t.Fatalf("the admin got %d", st)
		}
	}
	// The author's protected connections were not the ones pushed out.
	if st := s.gateOf(t, func(gateState) bool { return true }); st.users[annID] != perUser {
		t.Fatalf("the author's protected connections: %d, want %d", st.users[annID], perUser)
	}
}

// TestIdleTrustedConnectionMakesRoom: when every place is held by
// authenticated connections waiting for their next request, a new one
// closes the one idle longest; its client reconnects on its next request.
func TestIdleTrustedConnectionMakesRoom(t *testing.T) {
	const limit = 3
	s := newServed(t, func(c *Config) {
		c.MaxConns, c.MaxConnsPerAddr, c.AdminConns = limit, -1, 1
	})
	clients := map[string]*http.Client{}
	for _, tok := range []string{s.ann, s.bob, s.admin} {
		clients[tok] = &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
		req, _ := http.NewRequest("GET", s.url+"/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := clients[tok].Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("whoami: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	s.gateOf(t, func(st gateState) bool { return st.idle == limit })
	if st := s.healthz(t); st != http.StatusOK {
		t.Fatalf("/healthz with every place held by idle authenticated connections: %d", st)
	}
	var m dto.Metric
	if err := s.srv.m.connEvicted.WithLabelValues("idle").Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
		t.Fatalf("idle evictions counted: %v %v", m.GetCounter().GetValue(), err)
	}
	// ann's connection was idle longest and was closed; ann reconnects.
	req, _ := http.NewRequest("GET", s.url+"/v1/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+s.ann)
	resp, err := clients[s.ann].Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("whoami after eviction: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestUnauthorizedClosesConnection: the answer to a request without a
// valid token closes the connection instead of reading the rest of its
// body; a kept-alive client then reconnects.
func TestUnauthorizedClosesConnection(t *testing.T) {
	s := newServed(t, nil)
	for _, tok := range []string{"", "folio_000000000000_nope"} {
		c := s.dialFrom(t, "")
		auth := ""
		if tok != "" {
			auth = "Authorization: Bearer " + tok + "\r\n"
		}
		fmt.Fprintf(c, "POST /v1/docs HTTP/1.1\r\nHost: folio\r\n%sContent-Length: 100000\r\n\r\n{\"attrs\":", auth)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Fatalf("token %q: %v %v", tok, resp, err)
		}
		if !closedByServer(c) {
			t.Fatalf("token %q: connection still open after the 401", tok)
		}
	}
	// Also without a body: no keep-alive for the unauthenticated.
	c := s.dialFrom(t, "")
	io.WriteString(c, "GET /v1/docs HTTP/1.1\r\nHost: folio\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !resp.Close || !closedByServer(c) {
		t.Fatalf("GET without a token: %v %v", resp, err)
	}
}

// TestBodyDeadline: a body that does not arrive within ReadTimeout fails
// its request and closes the connection; a request whose body arrived
// keeps its context for as long as its answer takes.
func TestBodyDeadline(t *testing.T) {
	const budget = 300 * time.Millisecond
	s := newServed(t, func(c *Config) { c.ReadTimeout = budget })
	c := s.dialFrom(t, "")
	fmt.Fprintf(c, "POST /v1/docs HTTP/1.1\r\nHost: folio\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n{\"attrs\":", s.ann)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode/100 != 4 || !closedByServer(c) {
		t.Fatalf("trickled body: %v %v", resp, err)
	}

	// The daemon's handler chain around a handler that answers after the
	// budget (as a long backup pack does): its context must not be
	// cancelled by the read deadline once the body has arrived.
	canceled := make(chan bool, 1)
	s2 := newServedWith(t, func(c *Config) { c.ReadTimeout = budget }, func(srv *Server) {
		srv.handler = srv.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
				canceled <- true
			case <-time.After(3 * budget):
				canceled <- false
			}
			io.WriteString(w, "done")
		}))
	})
	resp2, err := http.Post(s2.url+"/slow", "text/plain", strings.NewReader(strings.Repeat("x", 64<<10)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if <-canceled || string(b) != "done" {
		t.Fatalf("a request whose body arrived was cancelled by the read deadline (%q)", b)
	}
}

// TestRandomMethodsDoNotGrowMetrics: client-chosen methods (and paths)
// never become label values; /metrics keeps its series count.
func TestRandomMethodsDoNotGrowMetrics(t *testing.T) {
	s := newServed(t, nil)
	rnd := rand.New(rand.NewSource(8))
	method := func() string {
		b := make([]byte, 12)
		for i := range b {
			b[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[rnd.Intn(26)]
		}
		return string(b)
	}
	hc := &http.Client{}
	send := func(n int) []string {
		var sent []string
		for i := 0; i < n; i++ {
			m := method()
			sent = append(sent, m)
			req, _ := http.NewRequest(m, s.url+"/v1/"+m, nil)
			req.Header.Set("Authorization", "Bearer "+s.ann)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return sent
	}
	series := func() (int, []byte) {
		resp, err := hc.Get(s.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		n := 0
		for _, l := range bytes.Split(body, []byte("\n")) {
			if len(l) > 0 && l[0] != '#' && bytes.HasPrefix(l, []byte("folio_")) {
				n++
			}
		}
		return n, body
	}
	send(1) // the series of "other" exist from here on
	series()
	before, _ := series()
	sent := send(300)
	after, body := series()
	if after != before {
		t.Fatalf("/metrics grew from %d to %d folio series after 300 random methods", before, after)
	}
	for _, m := range sent {
		if bytes.Contains(body, []byte(m)) {
			t.Fatalf("/metrics holds the client's method %q", m)
		}
	}
	if !bytes.Contains(body, []byte(`method="other"`)) {
		t.Fatalf("random methods are not counted as other:\n%s", body)
	}
}

// TestAuthenticatedSyncConnectionSurvivesFlood: a WebSocket whose hello
// authenticated is trusted like an HTTP connection: a flood of slow
// strangers does not push it out.
func TestAuthenticatedSyncConnectionSurvivesFlood(t *testing.T) {
	const limit = 3
	s := newServed(t, func(c *Config) {
		c.NewSync = nil // the real sync service
		c.MaxConns, c.MaxConnsPerAddr = limit, -1
		c.ReadHeaderTimeout = time.Hour
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := client.Dial(ctx, "ws://"+s.addr+"/v1/sync", client.Options{Token: s.ann, TokenInHello: true,
		Subprotocol: syncproto.SubprotocolJSON})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for i := 0; i < 3*limit; i++ {
		slowHeaders(t, s.dialFrom(t, ""))
	}
	if _, err := ws.Ping(ctx); err != nil {
		t.Fatalf("the authenticated sync connection was pushed out: %v", err)
	}
}

// userID is the user id of token's user.
func (s *served) userID(t *testing.T, token string) string {
	t.Helper()
	p, err := s.auth.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return p.UserID
}
