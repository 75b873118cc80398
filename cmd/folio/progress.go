package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
)

// meter renders a long job's progress on one line of standard error that
// it rewrites, at most every interval, and erases when the job ends. It
// renders nothing unless standard error is a terminal and the output is
// not JSON, so pipes, logs and scripts never see it. The jobs report
// through a callback (repo.Progress, pack's Progress); they never print.
//
// It is a few lines of our own rather than a progress-bar library: the
// jobs report counts of things ("objects 1200 of 5400"), not a stream to
// wrap, and one rewritten line is all a terminal needs.
type meter struct {
	w        io.Writer
	on       bool
	interval time.Duration
	now      func() time.Time

	mu    sync.Mutex // guards the fields below; jobs may report from several goroutines
	label string
	last  time.Time
	width int // of the line on screen, to erase it
	// phase is the what of the last report and since when it runs, for
	// its rate and the time left.
	phase      string
	phaseStart time.Time
}

// newMeter returns a meter for the verb's job named label; it is off
// when standard error is not a terminal or --format is json.
func newMeter(c *cli.Context, label string) *meter {
	on := isTerminal(c.App.ErrWriter) && c.String("format") != "json"
	return &meter{w: c.App.ErrWriter, on: on, interval: 100 * time.Millisecond, now: time.Now, label: label}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Progress shows that done of total items of what are through (total 0:
// not known); it has the signature of repo.Progress.
func (m *meter) Progress(what string, done, total int64) {
	if m == nil || !m.on {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.now()
	if what != m.phase {
		m.phase, m.phaseStart = what, t
	}
	if !m.last.IsZero() && t.Sub(m.last) < m.interval && (total == 0 || done < total) {
		return
	}
	m.last = t
	elapsed := t.Sub(m.phaseStart)
	var line string
	switch {
	case strings.HasPrefix(what, "bytes "): // "bytes written": "1.2 MiB written, 3.1 MiB/s"
		line = fmt.Sprintf("%s: %s %s", m.label, size(done), strings.TrimPrefix(what, "bytes "))
		if elapsed >= time.Second {
			line += fmt.Sprintf(", %s/s", size(int64(float64(done)/elapsed.Seconds())))
		}
	case total > 0:
		line = fmt.Sprintf("%s: %s %d of %d (%d%%)", m.label, what, done, total, done*100/total)
		line += rateAndETA(done, total, elapsed)
	default:
		line = fmt.Sprintf("%s: %s %d", m.label, what, done)
		line += rateAndETA(done, 0, elapsed)
	}
	m.draw(line)
}

// rateAndETA is ", 1200/s, 0:42 left" for done of total (0: unknown)
// items in elapsed; nothing before a second has passed, when a rate
// would mostly be noise.
func rateAndETA(done, total int64, elapsed time.Duration) string {
	if elapsed < time.Second || done <= 0 {
		return ""
	}
	rate := float64(done) / elapsed.Seconds()
	s := fmt.Sprintf(", %.0f/s", rate)
	if total > done {
		left := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
		s += fmt.Sprintf(", %d:%02d left", int(left.Minutes()), int(left.Seconds())%60)
	}
	return s
}

func (m *meter) draw(line string) {
	pad := ""
	if n := m.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(m.w, "\r%s%s", line, pad)
	m.width = len(line)
}

// Done erases the line, so that the verb's result or error stands alone.
func (m *meter) Done() {
	if m == nil || !m.on {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.width > 0 {
		fmt.Fprintf(m.w, "\r%s\r", strings.Repeat(" ", m.width))
		m.width = 0
	}
}

// countingWriter reports the bytes written through it to a meter.
type countingWriter struct {
	w    io.Writer
	n    int64
	m    *meter
	what string
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.m.Progress(c.what, c.n, 0)
	return n, err
}
