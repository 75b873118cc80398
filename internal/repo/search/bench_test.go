package search

import (
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/repo"
)

// benchDocs is the corpus size (FOLIO_SEARCH_BENCH_DOCS; default 10,000).
func benchDocs(b *testing.B) int {
	if v := os.Getenv("FOLIO_SEARCH_BENCH_DOCS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("FOLIO_SEARCH_BENCH_DOCS=%q is not a positive count", v)
		}
		return n
	}
	return 10000
}

// benchWords is the corpus vocabulary: 4,000 Latin words and 1,000
// two-character Chinese words, drawn with a Zipf-like skew so that some
// words are in most documents and most in a few (as in prose).
var benchWords = func() []string {
	var out []string
	for i := 0; i < 4000; i++ {
		out = append(out, fmt.Sprintf("w%dx%c", i, 'a'+rune(i%26)))
	}
	han := []rune("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处府")
	for i := 0; i < 1000; i++ {
		out = append(out, string([]rune{han[i%len(han)], han[(i*7+3)%len(han)]}))
	}
	return out
}()

// BenchmarkQuery reports the p50 and p99 of a two-word query (words
// drawn as the corpus's are) over N documents of 20 paragraphs of 12
// words each, a quarter of them another owner's (the index alone: "index"), and of the
// daemon's path in use, where a draft save precedes each query and the
// query applies its outbox entry first ("daemon"; the save itself is not
// timed).
func BenchmarkQuery(b *testing.B) {
	n := benchDocs(b)
	r := newRepo(b)
	zipf := rand.NewZipf(rand.New(rand.NewSource(2)), 1.1, 8, uint64(len(benchWords)-1))
	word := func() string { return benchWords[zipf.Uint64()] }
	para := func() string {
		s := ""
		for i := 0; i < 12; i++ {
			s += word() + " "
		}
		return s
	}
	var docs []string
	for i := 0; i < n; i++ {
		texts := make([]string, 20)
		for j := range texts {
			texts[j] = para()
		}
		owner := "ana"
		if i%4 == 0 {
			owner = "bo"
		}
		docs = append(docs, createDoc(b, r, owner, fmt.Sprintf("%s %s %d", word(), word(), i), []string{word()}, texts...))
	}
	start := time.Now()
	x, err := Open(ctx, r, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close(ctx)
	b.Logf("%d documents indexed in %v", n, time.Since(start))
	for _, mode := range []string{"index", "daemon"} {
		b.Run(mode, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				q := word() + " " + word()
				if mode == "daemon" {
					// A save between queries, as on a daemon in use: the
					// query applies its outbox entry first.
					saveOne(b, r, docs[i%len(docs)], para())
				}
				t := time.Now()
				if _, err := x.Search(ctx, "ana", q, 0); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

func saveOne(b *testing.B, r *repo.Repo, doc, text string) {
	b.StopTimer()
	defer b.StartTimer()
	d, err := r.Draft(ctx, doc)
	if err != nil {
		b.Fatal(err)
	}
	nb := body(text)
	if _, err := r.SaveDraft(ctx, repo.SaveParams{Doc: doc, Actor: "ana", BaseSeq: d.Seq, Body: &nb}); err != nil {
		b.Fatal(err)
	}
}
