package pack_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/foliodev/folio/objstore/pack"
	"github.com/foliodev/folio/objstore/pack/packtest"
)

// benchSize is documents × versions: FOLIO_BENCH_DOCS / FOLIO_BENCH_VERSIONS,
// by default small enough for a shared machine. bench/packs.sh runs the
// full comparison with git.
func benchSize() (int, int) {
	docs, versions := 50, 20
	if n, err := strconv.Atoi(os.Getenv("FOLIO_BENCH_DOCS")); err == nil && n > 0 {
		docs = n
	}
	if n, err := strconv.Atoi(os.Getenv("FOLIO_BENCH_VERSIONS")); err == nil && n > 0 {
		versions = n
	}
	return docs, versions
}

func benchPack(b *testing.B) (pack.Stores, []byte, pack.ExportStats) {
	b.Helper()
	s := openStoreCache(b, pack.MinCache) // as the CLI opens a store this small
	docs, versions := benchSize()
	if err := packtest.New(s.DB, s.Objects, s.Refs, 1).Build(docs, versions); err != nil {
		b.Fatal(err)
	}
	data, st := exportAll(b, s, pack.ExportOptions{})
	return s, data, st
}

func BenchmarkExport(b *testing.B) {
	s, data, st := benchPack(b)
	b.SetBytes(int64(st.RawBytes))
	b.ReportMetric(float64(len(data)), "packbytes")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		buf.Grow(len(data))
		if _, err := pack.Export(context.Background(), s, &buf, pack.ExportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	_, data, st := benchPack(b)
	b.SetBytes(int64(st.RawBytes))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := pack.Verify(context.Background(), bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkImport(b *testing.B) {
	_, data, st := benchPack(b)
	b.SetBytes(int64(st.RawBytes))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dst := openStoreCache(b, pack.MinCache)
		b.StartTimer()
		if _, err := pack.Import(context.Background(), dst, bytes.NewReader(data), pack.ImportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
