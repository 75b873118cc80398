package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
)

// The retrieval benchmarks fill a store with n memory items in snapshots
// of 10,000 (10 personas of one user, and more users as n grows), index
// them through the outbox, then time queries of one persona's snapshot
// in the conjunction form and report the 50th and 99th percentile
// latencies.
//
//	go test -run '^$' -bench 'Retrieval|Rebuild' -benchtime 200x ./persona/index
//	FOLIO_BENCH_1M=1 go test -run '^$' -bench 'Retrieval/items=1M' -benchtime 200x -timeout 60m ./persona/index

var (
	benchPlaces = []string{"北京", "上海", "杭州", "成都", "深圳", "广州", "南京", "西安", "武汉", "东京", "伦敦", "Toronto", "Lisbon", "Seattle"}
	benchOrgs   = []string{"星火公司", "北京大学", "浙江大学", "银河银行", "晨光出版社", "Acme Corp", "University of Toronto", "远山研究院"}
	benchVerbs  = []string{"工作", "读书", "住过", "出差", "开会", "做演讲", "带团队", "写代码", "跑步", "旅行"}
	benchNouns  = []string{"搜索系统", "推荐算法", "咖啡店", "马拉松", "摄影展", "开源项目", "写作课", "数据库", "编译器", "纪录片"}
	benchQuery  = []string{"北京", "京", "杭州 工作", "搜索系统", "星火公司 2019", "马拉松", "跑", "Toronto", "咖啡店 上海", "写作课 读书", "开源项目 带团队", "东京 旅行"}
)

const perSnapshot = 10_000

func benchText(r *rand.Rand) string {
	return fmt.Sprintf("%d年我在%s%s，和%s一起做%s。", 1995+r.IntN(30), benchPlaces[r.IntN(len(benchPlaces))],
		benchVerbs[r.IntN(len(benchVerbs))], benchOrgs[r.IntN(len(benchOrgs))], benchNouns[r.IntN(len(benchNouns))])
}

func fillBench(b *testing.B, db *kv.DB, n int) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	for s := 0; s*perSnapshot < n; s++ {
		docs := make([]Doc, 0, perSnapshot)
		for i := 0; i < perSnapshot && s*perSnapshot+i < n; i++ {
			text := benchText(r)
			docs = append(docs, Doc{Key: fmt.Sprintf("mi%07d", i), User: "u" + strconv.Itoa(s/10), Persona: "p" + strconv.Itoa(s),
				Status: []string{"supported", "supported", "supported", "conflicted"}[r.IntN(4)], Text: text,
				Confidence: 0.5 + r.Float64()/2, Evidence: 1 + r.IntN(4), Chars: len([]rune(text))})
		}
		writeSnapshot(b, db, "s"+strconv.Itoa(s), docs)
	}
}

func openBench(b *testing.B, n int) (*kv.DB, *Index, string) {
	b.Helper()
	dir := b.TempDir()
	db, err := kv.Open(dir, kv.Options{Create: true, MinFree: -1})
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(dir, "index")
	x, err := Open(context.Background(), db, root, tableSource{}, Options{Manual: true, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	fillBench(b, db, n)
	start := time.Now()
	if err := x.Drain(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed %d items through the outbox in %v", n, time.Since(start).Round(time.Millisecond))
	return db, x, root
}

func BenchmarkRetrieval(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"100k", 100_000}}
	if os.Getenv("FOLIO_BENCH_1M") != "" {
		sizes = append(sizes, struct {
			name string
			n    int
		}{"1M", 1_000_000})
	}
	for _, sz := range sizes {
		b.Run("items="+sz.name, func(b *testing.B) {
			db, x, _ := openBench(b, sz.n)
			defer db.Close()
			defer x.Close(context.Background())
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := Query{User: "u0", Persona: "p" + strconv.Itoa(i%min(10, sz.n/perSnapshot)), Snapshot: "s" + strconv.Itoa(i%min(10, sz.n/perSnapshot)),
					Text: benchQuery[i%len(benchQuery)], ExcludeDoc: "d1"}
				t0 := time.Now()
				if _, err := x.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

func BenchmarkRebuild100k(b *testing.B) {
	db, x, _ := openBench(b, 100_000)
	defer db.Close()
	defer x.Close(context.Background())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := x.Rebuild(context.Background(), "benchmark"); err != nil {
			b.Fatal(err)
		}
	}
}
