package main

import (
	"context"
	"errors"
	"fmt"
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
