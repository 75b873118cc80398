package localedit

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

// cpuTime is the process's user and system CPU time so far, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchmarkEdit measures throughput on a few KB of prose, one segment per
// paragraph, all rules on; the dictionary is loaded before the timer starts.
func benchmarkEdit(b *testing.B, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	segs := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	chars := utf8.RuneCount(raw)
	res, err := Edit(Request{Segments: segs})
	if err != nil || len(res.Edits) == 0 {
		b.Fatalf("warm-up: %v, %d edits", err, len(res.Edits))
	}
	b.SetBytes(int64(len(raw)))
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Edit(Request{Segments: segs}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(chars)*float64(b.N)/b.Elapsed().Seconds(), "chars/s")
	// CPU time (all threads, the collector's included) says more than
	// wall time on a machine shared with other work.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkEditChinese(b *testing.B) { benchmarkEdit(b, "testdata/bench.zh.txt") }
func BenchmarkEditEnglish(b *testing.B) { benchmarkEdit(b, "testdata/bench.en.txt") }

// BenchmarkLoadDictionary is the one-time cost of the first Chinese text.
func BenchmarkLoadDictionary(b *testing.B) {
	for b.Loop() {
		if _, err := newZHSegmenter(); err != nil {
			b.Fatal(err)
		}
	}
}
