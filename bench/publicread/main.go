package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("folio", "bin/folio", "the folio binary")
	articles := flag.Int("articles", 200, "published articles")
	blocks := flag.Int("blocks", 60, "paragraphs per article")
	duration := flag.Duration("duration", 10*time.Second, "length of each timed load phase")
	conc := flag.Int("concurrency", 8, "concurrent clients")
	flag.Parse()
	if err := run(*bin, *articles, *blocks, *duration, *conc); err != nil {
		fmt.Fprintln(os.Stderr, "publicread:", err)
		os.Exit(1)
	}
}

var tokenRE = regexp.MustCompile(`FOLIO_TOKEN=(\S+)`)

// lockedBuffer is a bytes.Buffer safe for the child's output copier and
// the reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type doc struct {
	SchemaVersion int     `json:"schemaVersion"`
	Blocks        []block `json:"blocks"`
}

type block struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Attrs    map[string]any   `json:"attrs,omitempty"`
	RichText []map[string]any `json:"richText"`
}

func article(i, n int) []byte {
	d := doc{SchemaVersion: 1}
	for j := 0; j < n; j++ {
		if j%10 == 0 {
			d.Blocks = append(d.Blocks, block{ID: fmt.Sprintf("h%d", j), Type: "heading", Attrs: map[string]any{"level": 2},
				RichText: []map[string]any{{"text": fmt.Sprintf("Section %d of article %d", j/10, i)}}})
		}
		d.Blocks = append(d.Blocks, block{ID: fmt.Sprintf("p%d", j), Type: "paragraph", RichText: []map[string]any{
			{"text": fmt.Sprintf("Paragraph %d of article %d: a ref is a named pointer to a version, and ", j, i)},
			{"text": "versions never change", "marks": []string{"bold"}},
			{"text": ". 草稿可以随时保存，检查点把草稿封存成版本。"},
		}})
	}
	b, _ := json.Marshal(d)
	return b
}

func run(bin string, n, blocks int, dur time.Duration, conc int) error {
	tmp, err := os.MkdirTemp("", "publicread")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	data := filepath.Join(tmp, "data")
	cfg := filepath.Join(tmp, "folio.toml")
	conf := "[reading]\nvisitor_per_minute = 1000000\naddress_per_minute = 1000000\nconcurrency = 64\n" +
		"[ai.reading]\nrequests_per_minute = 0\nrequests_per_day = 0\nuser_concurrency = 0\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return err
	}
	var stdout lockedBuffer
	serve := exec.Command(bin, "serve", "--init", "--data", data, "--config", cfg, "--listen", "127.0.0.1:0", "--log-level", "warn")
	serve.Env = append(os.Environ(), "FOLIO_SERVER=", "FOLIO_TOKEN=", "FOLIO_LISTEN=", "FOLIO_CONFIG=")
	serve.Stdout = &stdout
	if err := serve.Start(); err != nil {
		return err
	}
	defer func() {
		serve.Process.Signal(syscall.SIGTERM)
		serve.Wait()
	}()
	var base, token string
	for deadline := time.Now().Add(20 * time.Second); ; {
		if b, err := os.ReadFile(filepath.Join(data, "daemon.addr")); err == nil && len(b) > 0 {
			if m := tokenRE.FindStringSubmatch(stdout.String()); m != nil {
				base, token = strings.TrimSpace(string(b)), m[1]
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the daemon did not start: %s", stdout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t0 := time.Now()
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("a%04d", i)
		body := fmt.Sprintf(`{"id":%q,"attrs":{"title":"Article %s"},"body":%s}`, id, id, article(i, blocks))
		for _, p := range [][2]string{{"/v1/docs", body}, {"/v1/docs/" + id + "/publish", ""}} {
			req, _ := http.NewRequest("POST", base+p[0], strings.NewReader(p[1]))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				return fmt.Errorf("POST %s: %d %s", p[0], resp.StatusCode, b)
			}
		}
	}
	fmt.Printf("store: %d published articles of %d paragraphs, built through the daemon in %v\n", n, blocks, time.Since(t0).Round(time.Millisecond))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc * 2}, Timeout: 30 * time.Second}
	get := func(path string, hdr map[string]string) (int, error) {
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	path := func(i int) string { return fmt.Sprintf("/v1/public/articles/a%04d/html", i) }

	// Uncached: the first request for each article, one at a time.
	var first []time.Duration
	for i := 0; i < n; i++ {
		t := time.Now()
		st, err := get(path(i), nil)
		if err != nil || st != 200 {
			return fmt.Errorf("GET %s: %d %v", path(i), st, err)
		}
		first = append(first, time.Since(t))
	}
	report("GET html, uncached (first read of each article, sequential)", first, 0)

	// Cached, then revalidated, under load.
	lat, rps, err := load(conc, dur, func(w, k int) error {
		st, err := get(path((w*7919+k)%n), nil)
		if err == nil && st != 200 {
			err = fmt.Errorf("status %d", st)
		}
		return err
	})
	if err != nil {
		return err
	}
	report(fmt.Sprintf("GET html, cached (%d clients)", conc), lat, rps)
	etags := make([]string, n)
	for i := range etags {
		req, _ := http.NewRequest("GET", base+path(i), nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		etags[i] = resp.Header.Get("ETag")
	}
	lat, rps, err = load(conc, dur, func(w, k int) error {
		i := (w*7919 + k) % n
		st, err := get(path(i), map[string]string{"If-None-Match": etags[i]})
		if err == nil && st != 304 {
			err = fmt.Errorf("status %d", st)
		}
		return err
	})
	if err != nil {
		return err
	}
	report(fmt.Sprintf("GET html, If-None-Match -> 304 (%d clients)", conc), lat, rps)

	// The reading assistant on the local provider.
	explain := func(i int, passage, visitor string) (time.Duration, error) {
		body := fmt.Sprintf(`{"passage":%q,"block":"p%d"}`, passage, i%blocks)
		req, _ := http.NewRequest("POST", base+fmt.Sprintf("/v1/public/articles/a%04d/explain", i%n), strings.NewReader(body))
		req.Header.Set("X-Visitor-Id", visitor)
		t := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte("event: done")) {
			return 0, fmt.Errorf("explain: %d %s", resp.StatusCode, b)
		}
		return time.Since(t), nil
	}
	var miss, hit []time.Duration
	for i := 0; i < 300; i++ {
		d, err := explain(i, fmt.Sprintf("Paragraph %d of article", i%blocks), fmt.Sprintf("v%d", i))
		if err != nil {
			return err
		}
		miss = append(miss, d)
	}
	for i := 0; i < 300; i++ {
		d, err := explain(i, fmt.Sprintf("Paragraph %d of article", i%blocks), fmt.Sprintf("w%d", i))
		if err != nil {
			return err
		}
		hit = append(hit, d)
	}
	report("POST explain, local provider, model call (sequential)", miss, 0)
	report("POST explain, cache hit (sequential)", hit, 0)
	return nil
}

// load runs conc workers for dur, each calling f(worker, k) in a loop,
// and returns every latency and the requests per second.
func load(conc int, dur time.Duration, f func(w, k int) error) ([]time.Duration, float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var mine []time.Duration
			for k := 0; ctx.Err() == nil; k++ {
				t := time.Now()
				if err := f(w, k); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	return all, float64(len(all)) / time.Since(start).Seconds(), firstErr
}

func report(what string, ds []time.Duration, rps float64) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	pct := func(p float64) time.Duration { return ds[min(len(ds)-1, int(float64(len(ds))*p))] }
	line := fmt.Sprintf("%-62s n=%-7d p50=%-10v p99=%-10v", what, len(ds), pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond))
	if rps > 0 {
		line += fmt.Sprintf(" %.0f req/s", rps)
	}
	fmt.Println(line)
}
