package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSlowConnectionsCannotExhaustDescriptors runs the daemon with only
// 128 file descriptors and a cap of 80 connections, and opens twice the
// cap of slow unauthenticated connections — more than the daemon has
// descriptors. Without the cap accept fails for everyone once they are
// spent; with it /healthz still answers, and so does an author.
func TestSlowConnectionsCannotExhaustDescriptors(t *testing.T) {
	isolateEnv(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set the descriptor limit with")
	}
	const limit = 80
	tmp := t.TempDir()
	cfg := writeFile(t, tmp, "folio.toml", fmt.Sprintf(`[server]
max_connections = %d
max_connections_per_address = 0
read_header_timeout = "1h"
`, limit))
	underLimit := func(name string, args ...string) *exec.Cmd {
		return exec.Command("sh", append([]string{"-c", `ulimit -n 128 && exec "$0" "$@"`, name}, args...)...)
	}
	d := startDaemonWith(t, underLimit, filepath.Join(tmp, "data"), "", "--config", cfg)
	addr := d.url[len("http://"):]

	var slow []net.Conn
	defer func() {
		for _, c := range slow {
			c.Close()
		}
	}()
	for i := 0; i < 2*limit; i++ {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		slow = append(slow, c)
		io.WriteString(c, "POST /v1/docs HTTP/1.1\r\nHost: folio\r\nX-Slow: ") // headers that never end
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get(d.url + "/healthz")
	if err != nil {
		t.Fatalf("/healthz with %d slow connections: %v\n%s", len(slow), err, d.stderr)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
	if r := runCLI("--server", d.url, "--token", d.token, "doc", "list"); r.code != 0 {
		t.Fatalf("doc list during the flood: %+v", r)
	}
	d.stop(t)
}
