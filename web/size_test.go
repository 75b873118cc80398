package web

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"testing"
)

// BenchmarkEditorJSGzip reports the editor route's JavaScript (app.js, the
// only script /d/{id} loads) gzipped at the best compression, in gzip-KB;
// the budget is 250.
func BenchmarkEditorJSGzip(b *testing.B) {
	js, err := fs.ReadFile(Files(), "app.js")
	if err != nil {
		b.Fatal(err)
	}
	var n int
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		w.Write(js)
		w.Close()
		n = buf.Len()
	}
	b.ReportMetric(float64(n)/1024, "gzip-KB")
	b.ReportMetric(float64(len(js))/1024, "raw-KB")
}
