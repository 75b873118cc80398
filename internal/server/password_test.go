package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/repo/publish"
)

// handled counts the requests of route the server has answered.
func (s *served) handled(t *testing.T, route string) int {
	t.Helper()
	mfs, err := s.srv.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "folio_http_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && l.GetValue() == route {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int(n)
}

// awaitHandled waits until the server has answered n requests of route.
func (s *served) awaitHandled(t *testing.T, route string, n int) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for s.handled(t, route) < n {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the server answered %d of %d requests of %s", s.handled(t, route), n, route)
		}
	}
}

// fireAndForget sends a GET with a password from local address from and
// closes the connection without waiting for the answer.
func (s *served) fireAndForget(t *testing.T, from, path, password string) {
	t.Helper()
	c := s.dialFrom(t, from)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: folio\r\n%s: %s\r\n\r\n", path, PasswordHeader, password)
	c.Close()
}

// TestPasswordFloodDoesNotStallReader: 2,000 fire-and-forget requests
// with passwords — for a missing slug, a public article and, from another
// address, wrong ones for a password-protected article — run only a few
// password checks, and a reader with the right password then finds no
// more than the one check of the flooding address ahead of it.
func TestPasswordFloodDoesNotStallReader(t *testing.T) {
	s := newServed(t, func(c *Config) { c.MaxConns, c.MaxConnsPerAddr = -1, -1 })
	if c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).Dial("tcp", s.addr); err != nil {
		t.Skipf("cannot dial from 127.0.0.2 here: %v", err)
	} else {
		c.Close()
	}
	s.newArticle("open", "open", "Public text.")
	s.ok("POST", "/v1/docs/open/publish", s.ann, nil, nil)
	s.newArticle("pw", "locked", "Password text.")
	s.ok("POST", "/v1/docs/pw/publish", s.ann, PublishRequest{Visibility: "password", Password: "correct horse"}, nil)
	const route = "/v1/public/articles/{slug}"
	for i := 0; i < 500; i++ {
		s.fireAndForget(t, "127.0.0.2", "/v1/public/articles/no-such-article", fmt.Sprint("guess-", i))
		s.fireAndForget(t, "127.0.0.2", "/v1/public/articles/open", fmt.Sprint("guess-", i))
	}
	s.awaitHandled(t, route, 1000)
	if st := s.srv.pub.PasswordStats(); st.Ran != 0 || st.Waiting != 0 {
		t.Fatalf("a missing slug or a public article queued checks: %+v", st)
	}
	for i := 0; i < 1000; i++ {
		s.fireAndForget(t, "127.0.0.3", "/v1/public/articles/locked", fmt.Sprint("guess-", i))
	}
	s.awaitHandled(t, route, 2000)
	st := s.srv.pub.PasswordStats()
	free := publish.DefaultGuardLimits.FreeAddr
	if st.Ran < 1 || st.Ran > int64(free)+3 || st.Limited+st.Busy+st.Dropped+st.Ran < 1000 {
		t.Fatalf("1,000 wrong passwords from one address: %+v (at most %d checks should run)", st, free+3)
	}
	// The flooding address is told to back off.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}).DialContext}}
	req, _ := http.NewRequest("GET", s.url+"/v1/public/articles/locked", nil)
	req.Header.Set(PasswordHeader, "one more guess")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || errOf(t, body).Code != publish.CodePasswordRateLimited {
		t.Fatalf("guess from the flooding address: %d %v %s; %+v", resp.StatusCode, resp.Header, body, s.srv.pub.PasswordStats())
	}
	// The reader with the right password gets in at once.
	req, _ = http.NewRequest("GET", s.url+"/v1/public/articles/locked", nil)
	req.Header.Set(PasswordHeader, "correct horse")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	after := s.srv.pub.PasswordStats()
	if resp.StatusCode != http.StatusOK || after.Ran != st.Ran+1 || after.MaxAhead > 1 {
		t.Fatalf("reader with the right password: %d, checks %+v (before: %+v)", resp.StatusCode, after, st)
	}
}
