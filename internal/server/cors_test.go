package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/syncproto"
)

// A browser editor served from an allowed origin can call the API (its
// preflight is answered, its responses carry the CORS header) and open
// the sync socket; other origins get neither.
func TestBrowserOrigins(t *testing.T) {
	dir := t.TempDir()
	if err := repo.Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	as := auth.New(r.DB())
	srv, err := New(Config{Content: r, Auth: as, Publish: publish.New(r, nil), AllowedOrigins: []string{"https://blog.example"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer srv.Shutdown(ctx)
	_, ann, _ := as.AddUser(ctx, "ann", false)

	req := func(method, origin string, hdr map[string]string) *http.Response {
		t.Helper()
		rq, _ := http.NewRequest(method, ts.URL+"/v1/docs", nil)
		rq.Header.Set("Origin", origin)
		for k, v := range hdr {
			rq.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	pre := req(http.MethodOptions, "https://blog.example", map[string]string{
		"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"})
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "https://blog.example" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight from an allowed origin: %d %v", pre.StatusCode, pre.Header)
	}
	get := req(http.MethodGet, "https://blog.example", map[string]string{"Authorization": "Bearer " + ann.Secret})
	if get.StatusCode != http.StatusOK || get.Header.Get("Access-Control-Allow-Origin") != "https://blog.example" {
		t.Fatalf("GET from an allowed origin: %d %v", get.StatusCode, get.Header)
	}
	other := req(http.MethodGet, "https://elsewhere.example", map[string]string{"Authorization": "Bearer " + ann.Secret})
	if other.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("another origin got CORS headers: %v", other.Header)
	}

	wsURL := "ws" + strings.TrimPrefix(ts.URL, "http") + "/v1/sync"
	dial := func(origin string) error {
		c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{
			Subprotocols: []string{syncproto.SubprotocolJSON},
			HTTPHeader:   http.Header{"Origin": {origin}, "Authorization": {"Bearer " + ann.Secret}},
		})
		if err == nil {
			c.CloseNow()
		}
		return err
	}
	if err := dial("https://blog.example"); err != nil {
		t.Fatalf("sync from an allowed origin: %v", err)
	}
	if err := dial("https://elsewhere.example"); err == nil {
		t.Fatal("sync from another origin was accepted")
	}
}
