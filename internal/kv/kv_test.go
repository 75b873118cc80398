package kv_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
)

// The test binary doubles as the child process of the multi-process
// tests: FOLIO_KV_CHILD says what to do, FOLIO_KV_DIR where.
func TestMain(m *testing.M) {
	switch os.Getenv("FOLIO_KV_CHILD") {
	case "hold":
		childHold(os.Getenv("FOLIO_KV_DIR"))
	case "write":
		childWrite(os.Getenv("FOLIO_KV_DIR"))
	default:
		os.Exit(m.Run())
	}
}

// childHold opens the store, says so and keeps it open until stdin closes.
func childHold(dir string) {
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	db.Close()
	os.Exit(0)
}

// childWrite commits synced batches of two keys forever, printing each
// batch's number once Commit has returned (the acknowledgement).
func childWrite(dir string) {
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	start := 0
	if v, err := kv.Get(db, []byte("t/crash/last")); err == nil {
		start = int(kv.ParseUint64(v)) + 1
	}
	for i := start; ; i++ {
		b := db.NewBatch()
		b.Set(kv.Uint64([]byte("t/crash/n/"), uint64(i)), []byte(strings.Repeat("v", 100+i%500)))
		b.Set([]byte("t/crash/last"), kv.Uint64(nil, uint64(i)))
		if err := db.Apply(b, kv.Sync); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(i)
	}
}

func child(t *testing.T, mode, dir string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "FOLIO_KV_CHILD="+mode, "FOLIO_KV_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if mode == "hold" {
		if _, err := cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

func create(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestOpenLockedByAnotherProcess(t *testing.T) {
	dir := create(t)
	cmd, out := child(t, "hold", dir)
	if !out.Scan() || out.Text() != "ready" {
		t.Fatalf("child did not open the store: %q", out.Text())
	}
	_, err := kv.Open(dir, kv.Options{})
	if !errors.Is(err, kv.ErrLocked) {
		t.Fatalf("Open while another process holds the store: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name the directory", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		t.Fatalf("Open after the other process died: %v", err)
	}
	db.Close()
}

func TestOpenNotInitialized(t *testing.T) {
	for name, dir := range map[string]string{"empty": t.TempDir(), "missing": t.TempDir() + "/nope"} {
		_, err := kv.Open(dir, kv.Options{})
		if !errors.Is(err, kv.ErrNotInitialized) {
			t.Errorf("%s directory: %v, want ErrNotInitialized", name, err)
		}
		if _, err := os.Stat(dir + "/store"); err == nil {
			t.Errorf("%s directory: Open without Create made a store", name)
		}
	}
	dir := create(t)
	db, err := kv.Open(dir, kv.Options{Create: true}) // a second init is harmless
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestCrashSafety(t *testing.T) {
	dir := create(t)
	kills := 5
	if testing.Short() {
		kills = 2
	}
	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	acked := -1
	for k := 0; k < kills; k++ {
		cmd, out := child(t, "write", dir)
		lines := make(chan string)
		go func() {
			for out.Scan() {
				lines <- out.Text()
			}
			close(lines)
		}()
		deadline := time.After(time.Duration(30+r.Intn(200)) * time.Millisecond)
		started := false
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				n, err := strconv.Atoi(l)
				if err != nil {
					t.Fatalf("child: %s", l)
				}
				acked, started = n, true
			case <-deadline:
				if !started { // let it acknowledge something first
					deadline = time.After(10 * time.Millisecond)
					continue
				}
				cmd.Process.Signal(syscall.SIGKILL)
				deadline = nil
			}
		}
		cmd.Wait()

		db, err := kv.Open(dir, kv.Options{})
		if err != nil {
			t.Fatalf("reopen after kill %d: %v", k, err)
		}
		last, err := kv.Get(db, []byte("t/crash/last"))
		if err != nil || int(kv.ParseUint64(last)) < acked {
			t.Fatalf("kill %d: last durable batch %d, but %d was acknowledged (%v)", k, kv.ParseUint64(last), acked, err)
		}
		for i := 0; i <= acked; i++ {
			v, err := kv.Get(db, kv.Uint64([]byte("t/crash/n/"), uint64(i)))
			if err != nil || len(v) != 100+i%500 {
				t.Fatalf("kill %d: acknowledged batch %d: %v", k, i, err)
			}
		}
		db.Close()
	}
	t.Logf("%d kills, %d acknowledged batches, all present", kills, acked+1)
}

func TestCompactAllShrinksOverwrites(t *testing.T) {
	db, err := kv.Open(t.TempDir(), kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	val := []byte(strings.Repeat("x", 1000))
	for i := 0; i < 2000; i++ {
		db.Set(kv.Uint64([]byte("t/k/"), uint64(i%100)), append(val, byte(i)), kv.NoSync)
	}
	if err := db.CompactAll(); err != nil {
		t.Fatal(err)
	}
	// 100 live keys of ~1 KB of repeated bytes: a few KB after compression.
	if n := db.DiskUsage(); n > 64<<10 {
		t.Fatalf("disk usage after CompactAll: %d bytes", n)
	}
	if v, err := kv.Get(db, kv.Uint64([]byte("t/k/"), 5)); err != nil || v[1000] != byte(1905%256) {
		t.Fatalf("latest value lost: %v", err)
	}
}

func TestOutboxKeysGrowAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := db.OutboxKey()
	b, _ := db.OutboxKey()
	if bytes.Compare(a, b) >= 0 || !bytes.HasPrefix(a, []byte(kv.PrefixOutbox)) {
		t.Fatalf("keys %x then %x", a, b)
	}
	if err := db.Set(b, []byte("e"), kv.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = kv.Open(dir, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, _ := db.OutboxKey()
	if bytes.Compare(c, b) <= 0 {
		t.Fatalf("after reopen %x is not after the stored %x", c, b)
	}
}

// A store's tables may be of any format: a store written with one set of
// level formats (zstd on 64 KiB blocks everywhere, as before Snappy; or
// RestingLevels' zstd at the bottom) opens and reads with the defaults as
// it is, and a full compaction rewrites its bottom level in the format of
// the options it was opened with, reading the same. A flush writes L0 in
// its level's format.
func TestTableFormatsOpenAndRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		levels []kv.LevelFormat
		bottom string // the written store's bottom-level compression
	}{
		{"zstd-64k before", []kv.LevelFormat{{Compression: kv.ZstdCompression, BlockSize: 64 << 10}}, "ZSTD"},
		{"resting", kv.RestingLevels, "ZSTD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := kv.Open(dir, kv.Options{Create: true, Levels: tc.levels})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewSource(1))
			words := strings.Fields("the a history of block version paragraph editing writer river journey long old quiet careful change")
			want := map[string]string{}
			put := func(n int) {
				for i := 0; i < n; i++ {
					k := fmt.Sprintf("o/%016x", rng.Uint64())
					var v strings.Builder
					for j := 0; j < 20+rng.Intn(40); j++ {
						v.WriteString(words[rng.Intn(len(words))] + " ")
					}
					want[k] = v.String()
					if err := db.Set([]byte(k), []byte(v.String()), kv.NoSync); err != nil {
						t.Fatal(err)
					}
				}
			}
			compressions := func(level int) map[string]bool {
				t.Helper()
				out, err := kv.TableCompressions(db, level)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			check := func(when string) {
				t.Helper()
				for k, v := range want {
					got, err := kv.Get(db, []byte(k))
					if err != nil || string(got) != v {
						t.Fatalf("%s: %s = %q, %v; want %q", when, k, got, err, v)
					}
				}
			}
			// Twice: the first compaction may move the flushed tables
			// down as they are; the second rewrites them in the bottom
			// level's format.
			for _, n := range []int{10000, 10000} {
				put(n)
				if err := db.CompactAll(); err != nil {
					t.Fatal(err)
				}
			}
			put(500) // in the write-ahead log only
			if c := compressions(6); len(c) != 1 || !c[tc.bottom] {
				t.Fatalf("the written store's bottom level: %v", c)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			if db, err = kv.Open(dir, kv.Options{}); err != nil {
				t.Fatalf("open with the defaults: %v", err)
			}
			defer db.Close()
			check("opened with the defaults")
			if err := db.CompactAll(); err != nil {
				t.Fatal(err)
			}
			check("after a full compaction")
			if c := compressions(6); len(c) != 1 || !c["Snappy"] {
				t.Fatalf("bottom level after a full compaction with the defaults: %v", c)
			}
			put(200)
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
			if c := compressions(0); len(c) != 1 || !c["Snappy"] {
				t.Errorf("a flush wrote %v at L0, want Snappy", c)
			}
			check("after a flush")
		})
	}
}
