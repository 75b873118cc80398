package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// TestSIGTERMWithEditors stops a daemon with SIGTERM while editors save
// over WebSocket: every acknowledged save is in the store, each editor's
// unsealed work is sealed as a leave checkpoint, every socket gets a
// resumable close code, and the process exits 0 within 10 s.
func TestSIGTERMWithEditors(t *testing.T) {
	isolateEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, dir, "")
	remote := []string{"--server", d.url, "--token", d.token}
	const editors = 4
	for k := 0; k < editors; k++ {
		if r := runCLI(append(remote, "doc", "new", "--id", fmt.Sprintf("ed%d", k), "--title", "Live")...); r.code != 0 {
			t.Fatalf("doc new: %+v", r)
		}
	}
	ws := "ws" + strings.TrimPrefix(d.url, "http") + "/v1/sync"
	ctx := context.Background()
	type result struct {
		last  *syncproto.Ack
		close *client.CloseError
	}
	results := make([]result, editors)
	var wg sync.WaitGroup
	started := make(chan struct{}, editors)
	for k := 0; k < editors; k++ {
		c, err := client.Dial(ctx, ws, client.Options{Token: d.token, Name: fmt.Sprintf("editor%d", k)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		wg.Add(1)
		go func(k int, c *client.Client) {
			defer wg.Done()
			doc := fmt.Sprintf("ed%d", k)
			snap, err := c.Open(ctx, doc)
			if err != nil {
				t.Errorf("open %s: %v", doc, err)
				return
			}
			seq := snap.Seq
			for i := 0; ; i++ {
				b := flowdoc.Block{ID: "p1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: fmt.Sprintf("editor %d keystroke %d", k, i)}}}
				ack, err := c.Save(ctx, doc, seq, syncproto.Change{Op: "upsert", Block: &b})
				if err != nil {
					<-c.Done()
					errors.As(c.Err(), &results[k].close)
					return
				}
				results[k].last, seq = ack, ack.Seq
				if i == 10 {
					started <- struct{}{}
				}
			}
		}(k, c)
	}
	for k := 0; k < editors; k++ {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatal("editors did not get going")
		}
	}
	took := d.stop(t)
	wg.Wait()
	if took > 10*time.Second {
		t.Fatalf("daemon took %v to exit", took)
	}
	r, err := repo.Open(dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for k, res := range results {
		doc := fmt.Sprintf("ed%d", k)
		if res.close == nil || !res.close.Resumable() {
			t.Errorf("%s: closed with %+v, want a resumable close", doc, res.close)
		}
		dr, err := r.Draft(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		if res.last == nil || dr.Seq < res.last.Seq {
			t.Errorf("%s: draft seq %d, last acknowledged %+v", doc, dr.Seq, res.last)
		}
		if dr.Unsealed {
			t.Errorf("%s: unsealed after a graceful shutdown", doc)
		}
		log, _ := r.Log(ctx, doc, 1, 0)
		if res.last != nil && res.close != nil && len(log) == 1 {
			t.Logf("%s: last ack seq %d, closed %d %q, head %s (%s)", doc, res.last.Seq, res.close.Code, res.close.Reason, log[0].Label, log[0].Reason)
		}
		if len(log) != 1 || log[0].Reason != "leave" {
			t.Errorf("%s: head %+v, want a leave checkpoint", doc, log)
		}
	}
}

// TestHTTPSaveCrashRecovery: a draft saved over HTTP and never sealed
// (the daemon is killed with SIGKILL) is sealed as a "recovery" checkpoint
// when an editor next opens the document, exactly as a WebSocket editor's
// unsealed save would be.
func TestHTTPSaveCrashRecovery(t *testing.T) {
	isolateEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, dir, "")
	if r := runCLI("--server", d.url, "--token", d.token, "doc", "new", "--id", "hd", "--title", "Crash"); r.code != 0 {
		t.Fatalf("doc new: %+v", r)
	}
	req, err := http.NewRequest("POST", d.url+"/v1/docs/hd/draft", strings.NewReader(
		`{"baseSeq":1,"changes":[{"op":"upsert","block":{"id":"h1","type":"paragraph","richText":[{"text":"typed over HTTP"}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"unsealed":true`) {
		t.Fatalf("save: %d %s", resp.StatusCode, body)
	}
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.done

	d = startDaemon(t, dir, d.token)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(d.url, "http")+"/v1/sync", client.Options{Token: d.token})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	snap, err := c.Open(ctx, "hd")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Recovered == nil || snap.Recovered.Reason != "recovery" || snap.Recovered.Kind != "recovery" || snap.Unsealed ||
		snap.Head != snap.Recovered.Label {
		t.Fatalf("open after the crash: recovered %+v, unsealed %v, head %s", snap.Recovered, snap.Unsealed, snap.Head)
	}
	if n := len(snap.Body.Blocks); n == 0 || snap.Body.Blocks[n-1].RichText[0].Text != "typed over HTTP" {
		t.Fatalf("recovered body %+v", snap.Body.Blocks)
	}
}
