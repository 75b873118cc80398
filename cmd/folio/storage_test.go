package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/faultfs"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// syncFailsOnTrigger is the store filesystem of a daemon under test: once
// the file trigger exists, every write-ahead log sync fails with EIO, as
// on a disk that died.
func syncFailsOnTrigger(trigger string) kv.FS {
	fs := faultfs.NewOS()
	fs.SetRule(func(op faultfs.Op, path string) error {
		if op == faultfs.OpSync && strings.HasSuffix(path, ".log") {
			if _, err := os.Stat(trigger); err == nil {
				return syscall.EIO
			}
		}
		return nil
	})
	return fs
}

// api calls the daemon's HTTP API with its admin token.
func (d *daemon) api(t testing.TB, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+d.token)
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v (the daemon hangs or is gone)\n%s", method, path, err, d.stderr)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func upsertBody(id, text string) map[string]any {
	return map[string]any{"changes": []any{map[string]any{"op": "upsert",
		"block": map[string]any{"id": id, "type": "paragraph", "richText": []any{map[string]any{"text": text}}}}}}
}

func errCode(data []byte) string {
	var eb server.ErrorBody
	json.Unmarshal(data, &eb)
	return eb.Error.Code
}

func (d *daemon) health(t testing.TB) (int, server.Health) {
	t.Helper()
	st, data := d.api(t, "GET", "/healthz", nil)
	var h server.Health
	if err := json.Unmarshal(data, &h); err != nil {
		t.Fatalf("healthz: %d %s", st, data)
	}
	return st, h
}

// wait waits for the daemon to exit and returns its exit code.
func (d *daemon) wait(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case <-d.done:
	case <-time.After(within):
		t.Fatalf("the daemon did not exit within %v\n%s", within, d.stderr)
	}
	var ee *exec.ExitError
	if errors.As(d.err, &ee) {
		return ee.ExitCode()
	}
	if d.err != nil {
		t.Fatal(d.err)
	}
	return 0
}

// draftBlocks returns the ids of the blocks of document doc's draft.
func (d *daemon) draftBlocks(t testing.TB, doc string) map[string]bool {
	t.Helper()
	st, data := d.api(t, "GET", "/v1/docs/"+doc+"/draft", nil)
	if st != http.StatusOK {
		t.Fatalf("draft of %s: %d %s", doc, st, data)
	}
	var dr struct {
		Body struct{ Blocks []struct{ ID string } }
	}
	if err := json.Unmarshal(data, &dr); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, b := range dr.Body.Blocks {
		out[b.ID] = true
	}
	return out
}

// A daemon whose disk fails under it answers the save caught in the
// failure and every one queued behind it 503 storage_failed, turns
// /healthz 503 with the cause, closes sync sessions with 4006, and exits
// non-zero; restarted on a healthy disk it has every acknowledged save.
func TestServeFailsStopOnStorageFailure(t *testing.T) {
	isolateEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	trigger := filepath.Join(t.TempDir(), "disk-dies")
	t.Setenv("FOLIO_TEST_DISK_FAULT", trigger)
	d := startDaemon(t, dir, "", "--storage-fail-grace", "5s")
	if st, data := d.api(t, "POST", "/v1/docs", map[string]any{"id": "d1", "attrs": map[string]any{"title": "Disk"}}); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	editor, err := client.Dial(ctx, "ws"+strings.TrimPrefix(d.url, "http")+"/v1/sync", client.Options{Token: d.token})
	if err != nil {
		t.Fatal(err)
	}
	defer editor.CloseNow()
	if _, err := editor.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	var acked []string
	for i := range 20 {
		id := fmt.Sprintf("a%d", i)
		if st, data := d.api(t, "POST", "/v1/docs/d1/draft", upsertBody(id, "acknowledged "+id)); st != http.StatusOK {
			t.Fatalf("save %s: %d %s", id, st, data)
		}
		acked = append(acked, id)
	}

	if err := os.WriteFile(trigger, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	failedAt := time.Now()
	// Five saves at once: one is caught in the failed sync, the others
	// wait behind it on the document's lock; each gets its answer.
	var wg sync.WaitGroup
	answers := make([]string, 5)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, data := d.api(t, "POST", "/v1/docs/d1/draft", upsertBody(fmt.Sprintf("x%d", i), "never acknowledged"))
			answers[i] = fmt.Sprintf("%d %s", st, errCode(data))
		}()
	}
	wg.Wait()
	for i, a := range answers {
		if a != "503 storage_failed" {
			t.Errorf("save %d during the failure: %s, want 503 storage_failed", i, a)
		}
	}
	st, h := d.health(t)
	if st != http.StatusServiceUnavailable || h.Status != "storage failed" || h.Error == nil || !strings.Contains(h.Error.Cause, "input/output error") {
		t.Errorf("healthz after the failure: %d %+v", st, h)
	}
	if st, data := d.api(t, "GET", "/v1/docs/d1", nil); st != http.StatusServiceUnavailable || errCode(data) != "storage_failed" {
		t.Errorf("read after the failure: %d %s", st, data)
	}
	select {
	case <-editor.Done():
	case <-ctx.Done():
		t.Fatal("the sync session was not closed")
	}
	var ce *client.CloseError
	if !errors.As(editor.Err(), &ce) || ce.Code != syncproto.CloseStorageFailed || ce.Resumable() {
		t.Errorf("sync session closed with %v, want %d", editor.Err(), syncproto.CloseStorageFailed)
	}
	if code := d.wait(t, time.Minute); code != exitUnavailable {
		t.Errorf("exit code %d, want %d\n%s", code, exitUnavailable, d.stderr)
	}
	t.Logf("exited %v after the failure (grace 5s)", time.Since(failedAt).Round(time.Millisecond))
	for _, want := range []string{"storage failed", "input/output error", "storage failed in " + dir} {
		if !strings.Contains(d.stderr.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, d.stderr)
		}
	}

	if testing.Verbose() {
		t.Logf("the failed daemon's log:\n%s", d.stderr)
	}
	t.Setenv("FOLIO_TEST_DISK_FAULT", "")
	d2 := startDaemon(t, dir, d.token)
	have := d2.draftBlocks(t, "d1")
	for _, id := range acked {
		if !have[id] {
			t.Errorf("acknowledged save %s is lost after the restart", id)
		}
	}
	d2.stop(t)
}

// mountTmpfs mounts a tmpfs of size (e.g. "20m") on a new directory, or
// skips the test where that is not possible (not root, no tmpfs, -short).
// Under CI=true nothing is skipped: a CI that cannot mount fails.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("mounts a tmpfs and fills it; skipped with -short")
	}
	if os.Geteuid() != 0 {
		skip("SKIPPED: mounting a tmpfs needs root; this test of a real full disk did not run")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		skip("SKIPPED: cannot mount a tmpfs here (%v %s); this test of a real full disk did not run", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// resize grows (or shrinks) a tmpfs mounted by mountTmpfs: space freed.
func resize(t *testing.T, dir, size string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,size="+size, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s: %v %s", dir, err, out)
	}
}

// fill saves 60 KB blocks of fresh text until a save is refused, into
// documents of 100 blocks each (so that no document reaches its size
// limit); it returns the acknowledged saves ("doc/block") and the refused
// save's answer.
func fill(t *testing.T, d *daemon) ([]string, int, []byte) {
	t.Helper()
	var acked []string
	for i := 0; i < 5000; i++ {
		doc, id := fmt.Sprintf("fill%d", i/100), fmt.Sprintf("f%d", i)
		if i%100 == 0 {
			st, data := d.api(t, "POST", "/v1/docs", map[string]any{"id": doc, "attrs": map[string]any{"title": "Fill"}})
			if st != http.StatusCreated {
				return acked, st, data
			}
		}
		var sb strings.Builder
		for sb.Len() < 60000 {
			fmt.Fprintf(&sb, "%s line %d of a long article that fills the disk. ", id, sb.Len())
		}
		st, data := d.api(t, "POST", "/v1/docs/"+doc+"/draft", upsertBody(id, sb.String()))
		if st != http.StatusOK {
			return acked, st, data
		}
		acked = append(acked, doc+"/"+id)
	}
	t.Fatal("5000 saves of 60 KB fit on a 20 MiB disk")
	return nil, 0, nil
}

// checkAcked fails the test for every acknowledged save ("doc/block")
// missing from the daemon's drafts.
func checkAcked(t *testing.T, d *daemon, acked []string) {
	t.Helper()
	drafts := map[string]map[string]bool{}
	for _, a := range acked {
		doc, id, _ := strings.Cut(a, "/")
		if drafts[doc] == nil {
			drafts[doc] = d.draftBlocks(t, doc)
		}
		if !drafts[doc][id] {
			t.Errorf("acknowledged save %s is missing", a)
		}
	}
}

// On a real 20 MiB tmpfs with a 4 MiB reserve, saves are refused with 507
// storage_full before Pebble runs out of space, reads keep working, and
// saves are accepted again, without a restart, once the disk grows.
func TestServeOnFullDiskRefusesWritesUntilSpaceIsFreed(t *testing.T) {
	isolateEnv(t)
	mnt := mountTmpfs(t, "20m")
	cfg := writeFile(t, t.TempDir(), "folio.toml", "[storage]\nmin_free = 4194304\n")
	d := startDaemon(t, filepath.Join(mnt, "data"), "", "--config", cfg)
	acked, st, data := fill(t, d)
	if st != http.StatusInsufficientStorage || errCode(data) != "storage_full" {
		t.Fatalf("save %d on the full disk: %d %s\n%s", len(acked), st, data, d.stderr)
	}
	t.Logf("%d saves of 60 KB acknowledged before storage_full: %s", len(acked), data)
	if st, h := d.health(t); st != http.StatusOK || h.Storage != "full" {
		t.Errorf("healthz on the full disk: %d %+v", st, h)
	}
	checkAcked(t, d, acked) // reads work
	if st, _ := d.api(t, "POST", "/v1/docs/fill0/draft", upsertBody("r1", "still refused")); st != http.StatusInsufficientStorage {
		t.Fatalf("second save on the full disk: %d", st)
	}

	resize(t, mnt, "64m")
	deadline := time.Now().Add(time.Minute)
	for {
		st, data := d.api(t, "POST", "/v1/docs/fill0/draft", upsertBody("r1", "accepted once space was freed"))
		if st == http.StatusOK {
			break
		}
		if st != http.StatusInsufficientStorage || time.Now().After(deadline) {
			t.Fatalf("save after the disk grew: %d %s\n%s", st, data, d.stderr)
		}
		time.Sleep(100 * time.Millisecond) // Pebble's flush retry is backing off
	}
	if st, h := d.health(t); st != http.StatusOK || h.Storage != "" {
		t.Errorf("healthz after the disk grew: %d %+v", st, h)
	}
	d.stop(t)
}

// With no reserve, a real full disk makes Pebble's write-ahead log fail:
// the daemon answers 503 storage_failed and exits non-zero; a restart on
// the still-full disk refuses in one line and writes nothing; once the
// disk grows the daemon starts with every acknowledged save.
func TestServeOnFullDiskWithoutReserveFailsStop(t *testing.T) {
	isolateEnv(t)
	mnt := mountTmpfs(t, "20m")
	cfg := writeFile(t, t.TempDir(), "folio.toml", "[storage]\nmin_free = 0\n")
	dir := filepath.Join(mnt, "data")
	d := startDaemon(t, dir, "", "--config", cfg, "--storage-fail-grace", "5s")
	acked, st, data := fill(t, d)
	failedAt := time.Now()
	if st != http.StatusServiceUnavailable || errCode(data) != "storage_failed" {
		t.Fatalf("save %d on the full disk: %d %s\n%s", len(acked), st, data, d.stderr)
	}
	t.Logf("%d saves of 60 KB acknowledged before storage_failed", len(acked))
	if st, h := d.health(t); st != http.StatusServiceUnavailable || h.Error == nil || !strings.Contains(h.Error.Cause, "no space left on device") {
		t.Errorf("healthz after the failure: %d %+v", st, h)
	}
	if code := d.wait(t, time.Minute); code != exitUnavailable {
		t.Errorf("exit code %d, want %d\n%s", code, exitUnavailable, d.stderr)
	}
	t.Logf("exited %v after the failed save (grace 5s)", time.Since(failedAt).Round(time.Millisecond))

	before := listing(t, dir)
	start := exec.Command(os.Args[0], "serve", "--data", dir, "--listen", "127.0.0.1:0", "--config", cfg)
	start.Env = append(os.Environ(), "FOLIO_TEST_MAIN=1", "FOLIO_CONFIG=", "FOLIO_LISTEN=")
	var stderr bytes.Buffer
	start.Stderr = &stderr
	err := start.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUnavailable {
		t.Fatalf("restart on the full disk: %v\n%s", err, stderr.String())
	}
	line := strings.TrimSpace(stderr.String())
	if strings.Contains(line, "\n") || !strings.Contains(line, "cannot open the store in "+dir) || !strings.Contains(line, "free space on that disk") {
		t.Errorf("restart on the full disk does not say what to do in one line:\n%s", line)
	}
	t.Logf("restart on the full disk: %s", line)
	after := listing(t, dir)
	for name, size := range after {
		if before[name] != size {
			t.Errorf("the refused start changed %s: %d -> %d bytes", name, before[name], size)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("the refused start removed %s", name)
		}
	}

	resize(t, mnt, "64m")
	d2 := startDaemon(t, dir, d.token, "--config", cfg)
	checkAcked(t, d2, acked)
	d2.stop(t)
}

// listing is a directory tree's file names and sizes.
func listing(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fi.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// freeBytes is what an unprivileged writer may still write on dir's disk.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// fillTo writes a filler file of zeros into dir until the disk has about
// leave bytes free, and returns its path.
func fillTo(t *testing.T, dir string, leave int64) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for free := freeBytes(t, dir); free > leave; free = freeBytes(t, dir) {
		n := min(int64(len(chunk)), free-leave)
		if _, err := f.Write(chunk[:n]); err != nil {
			t.Fatalf("fill the disk: %v", err)
		}
	}
	return p
}

// lowDiskDaemon checks a daemon that runs below its disk's reserve: it
// logged the warning once, /healthz says the storage is full, reads of doc
// (when not "") answer over HTTP and WebSocket, writes get 507
// storage_full; once free (a function that frees space) has run, writes
// are accepted again without a restart.
func lowDiskDaemon(t *testing.T, d *daemon, doc string, free func()) {
	t.Helper()
	if n := strings.Count(d.stderr.String(), "the disk is below the storage reserve"); n != 1 {
		t.Errorf("the low-disk warning is logged %d times, want once:\n%s", n, d.stderr)
	}
	if st, h := d.health(t); st != http.StatusOK || h.Storage != "full" {
		t.Errorf("healthz below the reserve: %d %+v", st, h)
	}
	if st, data := d.api(t, "GET", "/v1/docs", nil); st != http.StatusOK {
		t.Errorf("list documents below the reserve: %d %s", st, data)
	}
	if st, data := d.api(t, "GET", "/v1/whoami", nil); st != http.StatusOK {
		t.Errorf("whoami below the reserve: %d %s", st, data)
	}
	if st, data := d.api(t, "GET", "/v1/presets", nil); st != http.StatusOK {
		t.Errorf("presets below the reserve: %d %s", st, data)
	}
	if doc != "" {
		for _, path := range []string{"/v1/docs/" + doc, "/v1/docs/" + doc + "/draft", "/v1/docs/" + doc + "/log", "/v1/docs/" + doc + "/versions/v1.r0"} {
			if st, data := d.api(t, "GET", path, nil); st != http.StatusOK {
				t.Errorf("GET %s below the reserve: %d %s", path, st, data)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		editor, err := client.Dial(ctx, "ws"+strings.TrimPrefix(d.url, "http")+"/v1/sync", client.Options{Token: d.token})
		if err != nil {
			t.Fatal(err)
		}
		snap, err := editor.Open(ctx, doc)
		if err != nil {
			t.Errorf("open %s over WebSocket below the reserve: %v", doc, err)
		} else if len(snap.Body.Blocks) == 0 {
			t.Errorf("open %s below the reserve: an empty body", doc)
		}
		editor.CloseNow()
	}
	st, data := d.api(t, "POST", "/v1/docs", map[string]any{"id": "later", "attrs": map[string]any{"title": "Later"}})
	if st != http.StatusInsufficientStorage || errCode(data) != "storage_full" {
		t.Fatalf("create below the reserve: %d %s, want 507 storage_full", st, data)
	}
	free()
	// Writes check the free space each time: the first one after the
	// filler is gone is accepted.
	st, data = d.api(t, "POST", "/v1/docs", map[string]any{"id": "later", "attrs": map[string]any{"title": "Later"}})
	if st != http.StatusCreated {
		t.Fatalf("create after space was freed: %d %s\n%s", st, data, d.stderr)
	}
	if st, data := d.api(t, "POST", "/v1/docs/later/draft", upsertBody("p1", "written once space was freed")); st != http.StatusOK {
		t.Fatalf("save after space was freed: %d %s", st, data)
	}
	if st, h := d.health(t); st != http.StatusOK || h.Storage != "" {
		t.Errorf("healthz after space was freed: %d %+v", st, h)
	}
}

// A daemon whose disk is below the [storage] min_free reserve starts —
// the first time (creating the store and the admin) and again on an
// existing store after a crash — serves reads, refuses writes with 507
// storage_full, and accepts writes again once space is freed, without a
// restart.
func TestServeStartsBelowTheReserve(t *testing.T) {
	isolateEnv(t)
	const reserve = 48 << 20
	cfg := writeFile(t, t.TempDir(), "folio.toml", fmt.Sprintf("[storage]\nmin_free = %d\n", reserve))

	t.Run("first start", func(t *testing.T) {
		mnt := mountTmpfs(t, "96m")
		filler := fillTo(t, mnt, reserve-16<<20)
		d := startDaemon(t, filepath.Join(mnt, "data"), "", "--config", cfg, "--log-level", "info")
		if !strings.Contains(d.stderr.String(), `written_within_reserve="owner migration, first admin user"`) {
			t.Errorf("the warning does not say what start-up wrote within the reserve:\n%s", d.stderr)
		}
		lowDiskDaemon(t, d, "", func() { os.Remove(filler) })
		d.stop(t)
	})

	t.Run("restart after a crash", func(t *testing.T) {
		mnt := mountTmpfs(t, "128m")
		dir := filepath.Join(mnt, "data")
		d := startDaemon(t, dir, "", "--config", cfg)
		if st, data := d.api(t, "POST", "/v1/docs", map[string]any{"id": "d1", "attrs": map[string]any{"title": "Kept"}}); st != http.StatusCreated {
			t.Fatalf("create: %d %s", st, data)
		}
		if st, data := d.api(t, "POST", "/v1/docs/d1/draft", upsertBody("b1", "saved, never sealed")); st != http.StatusOK {
			t.Fatalf("save: %d %s", st, data)
		}
		// A crash leaves the draft unsealed: opening it next time wants a
		// recovery checkpoint, which below the reserve waits.
		d.cmd.Process.Kill()
		<-d.done
		// The crashed process's write-ahead log holds preallocated space
		// that the restart frees once it has replayed the log: leave
		// less, so that the restarted daemon is below the reserve too.
		filler := fillTo(t, mnt, 8<<20)
		d2 := startDaemon(t, dir, d.token, "--config", cfg, "--log-level", "info")
		if !have(d2.draftBlocks(t, "d1"), "b1") {
			t.Errorf("the saved block is missing after the restart")
		}
		lowDiskDaemon(t, d2, "d1", func() { os.Remove(filler) })
		if !strings.Contains(d2.stderr.String(), "recovery checkpoint waits until writes resume") {
			t.Errorf("the log does not say the recovery checkpoint waits:\n%s", d2.stderr)
		}
		// With room again, the next open seals the crashed session's draft.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		editor, err := client.Dial(ctx, "ws"+strings.TrimPrefix(d2.url, "http")+"/v1/sync", client.Options{Token: d2.token})
		if err != nil {
			t.Fatal(err)
		}
		defer editor.CloseNow()
		snap, err := editor.Open(ctx, "d1")
		if err != nil {
			t.Fatal(err)
		}
		if snap.Recovered == nil || snap.Unsealed {
			t.Errorf("open after space was freed: recovered %v, unsealed %v; want the recovery checkpoint sealed", snap.Recovered, snap.Unsealed)
		}
		d2.stop(t)
	})
}

func have(m map[string]bool, k string) bool { return m[k] }
