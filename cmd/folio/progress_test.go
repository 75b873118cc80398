package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The meter draws one line it rewrites, at most once per interval but
// always at the end of a known total, and erases it when done.
func TestMeterRendersOneLine(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	m := &meter{w: &out, on: true, interval: 100 * time.Millisecond, now: func() time.Time { return now }, label: "fsck"}
	m.Progress("objects", 1, 0)
	m.Progress("objects", 2, 0) // within the interval: not drawn
	now = now.Add(time.Second)
	m.Progress("documents", 1, 4)
	m.Progress("documents", 4, 4) // the end of a known total is always drawn
	now = now.Add(time.Second)
	m.Progress("bytes written", 20<<20, 0)
	m.Done()
	got := out.String()
	want := "\rfsck: objects 1" +
		"\rfsck: documents 1 of 4 (25%)" +
		"\rfsck: documents 4 of 4 (100%)" +
		"\rfsck: 20.0 MiB written" + strings.Repeat(" ", 29-22) + // padded over the longer line before
		"\r" + strings.Repeat(" ", len("fsck: 20.0 MiB written")) + "\r"
	if got != want {
		t.Fatalf("meter drew\n%q\nwant\n%q", got, want)
	}
}

// A phase that runs for more than a second shows its rate, and with a
// known total the time left.
func TestMeterRateAndETA(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	m := &meter{w: &out, on: true, interval: 100 * time.Millisecond, now: func() time.Time { return now }, label: "gc"}
	m.Progress("objects marked", 0, 10000)
	now = now.Add(2 * time.Second)
	m.Progress("objects marked", 2500, 10000)
	now = now.Add(time.Second)
	m.Progress("objects listed", 100, 0) // a new phase: its own clock
	now = now.Add(2 * time.Second)
	m.Progress("objects listed", 9000, 0)
	got := out.String()
	for _, want := range []string{"gc: objects marked 2500 of 10000 (25%), 1250/s, 0:06 left", "gc: objects listed 100 ", "gc: objects listed 9000, 4500/s"} {
		if !strings.Contains(got+"\r", want) {
			t.Errorf("meter drew %q, want %q in it", got, want)
		}
	}
}

// Off a terminal (a pipe, a file, a test buffer) the meter draws nothing.
func TestMeterOffTerminal(t *testing.T) {
	var out bytes.Buffer
	m := &meter{w: &out, on: isTerminal(&out), interval: 0, now: time.Now, label: "gc"}
	m.Progress("objects", 1, 0)
	m.Done()
	if out.Len() != 0 {
		t.Fatalf("drew %q off a terminal", out.String())
	}
	r := runCLI("--data", t.TempDir(), "init")
	if r.stderr != "" {
		t.Fatalf("init wrote %q on stderr", r.stderr)
	}
}
