package repo

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
)

// BenchmarkCheckpoint500 measures one draft save of one changed block plus
// the checkpoint that seals it, on a 500-block document (two synced
// batches).
func BenchmarkCheckpoint500(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 500)
	d, _ := r.Draft(ctx, doc)
	seq := d.Seq
	seals := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blk := para(fmt.Sprintf("b%d", i%500), fmt.Sprintf("edit %d", i))
		res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
		if err != nil {
			b.Fatal(err)
		}
		seq = res.Seq
		start := time.Now()
		if _, _, err := r.Seal(ctx, doc, objstore.ReasonIdle, "ana"); err != nil {
			b.Fatal(err)
		}
		seals = append(seals, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(seals)
	b.ReportMetric(float64(seals[len(seals)/2].Microseconds())/1000, "seal-p50-ms")
	b.ReportMetric(float64(seals[len(seals)*99/100].Microseconds())/1000, "seal-p99-ms")
}

// BenchmarkMaterialize1000 measures Show of a 1,000-block version with a
// cold content cache.
func BenchmarkMaterialize1000(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.cacheMu.Lock()
		clear(r.cache)
		r.cacheMu.Unlock()
		s, err := r.Show(ctx, doc, "v1.r0")
		if err != nil || len(s.Body.Blocks) != 1000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkLog10000 measures a full log of a document with 10,000 versions.
func BenchmarkLog10000(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 20)
	seq := uint64(1)
	for i := 1; i < 10000; i++ {
		blk := para(fmt.Sprintf("b%d", i%20), fmt.Sprintf("edit %d", i))
		res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
		if err != nil {
			b.Fatal(err)
		}
		seq = res.Seq
		if _, _, err := r.Seal(ctx, doc, objstore.ReasonIdle, "ana"); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		log, err := r.Log(ctx, doc, 0, 0)
		if err != nil || len(log) != 10000 {
			b.Fatal(len(log), err)
		}
	}
}

// BenchmarkSealedSave200 measures what `folio bench history` does per
// checkpoint: a save of 1-3 changed blocks sealed in the same synced batch,
// on a 200-block document.
func BenchmarkSealedSave200(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 200)
	seq := uint64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ch []DraftChange
		for k := 0; k < 1+i%3; k++ {
			blk := para(fmt.Sprintf("b%d", (i*7+k*31)%200), fmt.Sprintf("edit %d.%d of a paragraph that is about a hundred bytes long, like the ones in the history bench", i, k))
			ch = append(ch, DraftChange{Op: ChangeUpsert, Block: &blk})
		}
		res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: ch, Seal: objstore.ReasonManual})
		if err != nil || res.Version == nil {
			b.Fatal(err)
		}
		seq = res.Seq
	}
}

// BenchmarkSaveDraft measures one editor save (one changed block of a
// 50-block document), synced: what every 1.2 s keystroke batch costs.
func BenchmarkSaveDraft(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 50)
	seq := uint64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blk := para(fmt.Sprintf("b%d", i%50), fmt.Sprintf("keystrokes %d", i))
		res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
		if err != nil {
			b.Fatal(err)
		}
		seq = res.Seq
	}
}

// BenchmarkSaveDraftBig measures a big but legal save: 4,000 changes
// (edits, inserts and moves) against a 10,000-block document, synced. It
// is the most work one save may ask for under the default limits; the
// document lock is held only for the part after prepareSave.
func BenchmarkSaveDraftBig(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 10000)
	seq := uint64(1)
	str := func(s string) *string { return &s }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ch := make([]DraftChange, 0, 4000)
		for j := 0; j < 4000; j++ {
			id := fmt.Sprintf("b%d", (j*7+i)%10000)
			switch j % 4 {
			case 0, 1:
				blk := para(id, fmt.Sprintf("edit %d.%d", i, j))
				ch = append(ch, DraftChange{Op: ChangeUpsert, Block: &blk})
			case 2:
				blk := para(fmt.Sprintf("n%d_%d", i, j), "new")
				ch = append(ch, DraftChange{Op: ChangeUpsert, Block: &blk, After: str(id)})
			case 3:
				ch = append(ch, DraftChange{Op: ChangeDelete, BlockID: fmt.Sprintf("n%d_%d", i, j-1)})
			}
		}
		res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: ch})
		if err != nil {
			b.Fatal(err)
		}
		seq = res.Seq
	}
}

// BenchmarkSaveDraft100k measures the answer to a save of 100,000 new
// blocks (5.4 MB of JSON over HTTP): refused before any work under the
// default limit of 4,000 changes per save.
func BenchmarkSaveDraft100k(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 10)
	ch := upserts(100000, "n")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: 1, Changes: ch})
		if err == nil {
			b.Fatal("a 100k-change save was accepted")
		}
	}
}

// benchSaveBlock measures a one-block save (one changed block, synced) on
// an n-block document: the pair BenchmarkSaveBlock50 and
// BenchmarkSaveBlock1000 shows whether a save costs in proportion to the
// change or to the document.
func benchSaveBlock(b *testing.B, n int) {
	r := newRepo(b)
	doc := create(b, r, n)
	seq := uint64(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blk := para(fmt.Sprintf("b%d", (i*37)%n), fmt.Sprintf("keystrokes %d in a paragraph of about the usual length", i))
		res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
		if err != nil {
			b.Fatal(err)
		}
		seq = res.Seq
	}
}

func BenchmarkSaveBlock50(b *testing.B)   { benchSaveBlock(b, 50) }
func BenchmarkSaveBlock1000(b *testing.B) { benchSaveBlock(b, 1000) }

// BenchmarkTableOptions compares sstable compressions and block sizes on
// what a busy daemon does: saves in place on 50 documents of 200 blocks,
// a checkpoint every 20 saves, a replay of each document's recent events
// after every save and a draft read every 10, with a small block cache
// and the memtable flushed every 256 saves (as a daemon taking a few
// thousand saves a second flushes it every few seconds), so that
// compactions and cache misses run as they do there. It reports the
// process's CPU time per save (compactions included) and the store's size.
//
//	go test ./internal/repo -run '^$' -bench TableOptions -benchtime 3000x
func BenchmarkTableOptions(b *testing.B) {
	every := func(c kv.Compression, block int) []kv.LevelFormat {
		return []kv.LevelFormat{{Compression: c, BlockSize: block}}
	}
	for _, tc := range []struct {
		name   string
		levels []kv.LevelFormat
	}{
		{"default", nil},              // kv.DefaultLevels: snappy 32 KiB at every level
		{"resting", kv.RestingLevels}, // snappy 32 KiB above, zstd 512 KiB at the bottom
		{"zstd-64k", every(kv.ZstdCompression, 64<<10)},
		{"zstd-16k", every(kv.ZstdCompression, 16<<10)},
		{"snappy-32k", every(kv.SnappyCompression, 32<<10)},
		{"snappy-16k", every(kv.SnappyCompression, 16<<10)},
		{"snappy-4k", every(kv.SnappyCompression, 4<<10)},
		{"none-16k", every(kv.NoCompression, 16<<10)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := Init(dir); err != nil {
				b.Fatal(err)
			}
			r, err := Open(dir, Options{KV: kv.Options{CacheSize: 4 << 20, Levels: tc.levels}})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			const docs = 50
			ids := make([]string, docs)
			seqs := make([]uint64, docs)
			for i := range ids {
				ids[i], seqs[i] = create(b, r, 200), 1
			}
			cpu := func() time.Duration {
				var ru syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			b.ResetTimer()
			start := cpu()
			for i := 0; i < b.N; i++ {
				d := i % docs
				blk := para(fmt.Sprintf("b%d", (i*37)%200), fmt.Sprintf("save %d: a paragraph of about the usual length, with words that repeat across the document and its history", i))
				res, err := r.SaveDraft(ctx, SaveParams{Doc: ids[d], Actor: "ana", BaseSeq: seqs[d], Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
				if err != nil {
					b.Fatal(err)
				}
				seqs[d] = res.Seq
				if i%20 == 19 {
					if _, _, err := r.Seal(ctx, ids[d], objstore.ReasonIdle, "ana"); err != nil {
						b.Fatal(err)
					}
				}
				other := ids[(i*7)%docs]
				last, _ := stream.Last(r.db, Stream(other))
				if _, err := stream.Read(r.db, Stream(other), max(last, 16)-16, 16); err != nil {
					b.Fatal(err)
				}
				if i%10 == 0 {
					if _, err := r.Draft(ctx, ids[(i*13)%docs]); err != nil {
						b.Fatal(err)
					}
				}
				if i%256 == 255 {
					if err := r.db.Flush(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			if err := r.db.Flush(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(r.db.DiskSpaceUsage())/(1<<20), "store-MiB")
		})
	}
}

// benchAccept accepts a one-block suggestion (replace_block, carried by
// CommitChange like the assistant's accept) on an article of n blocks:
// an accept should cost what its change costs, not what the article does,
// so 1000 should be close to 50.
//
//	go test ./internal/repo -run '^$' -bench 'AcceptBlock' -count 6
func benchAccept(b *testing.B, n int) {
	r := newRepo(b)
	doc := create(b, r, n)
	d, err := r.Draft(ctx, doc)
	if err != nil {
		b.Fatal(err)
	}
	base, fp := d.HeadID, d.Fingerprint
	hashes := map[string]objstore.ID{}
	for _, blk := range d.Body.Blocks {
		hashes[blk.ID] = objstore.ID(flowdoc.ContentHash(blk))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("b%d", (i*37)%n)
		blk := para(id, fmt.Sprintf("the suggestion's rewording %d of a paragraph of about the usual length", i))
		v, err := r.CommitChange(ctx, ChangeParams{Doc: doc, Actor: "ana", Kind: objstore.KindAcceptSuggestion,
			BaseVersion: base, BaseFingerprint: fp, TargetBlocks: map[string]objstore.ID{id: hashes[id]},
			Ops: []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: id, Block: &blk}}})
		if err != nil {
			b.Fatal(err)
		}
		base, fp, hashes[id] = v.Hash, v.Fingerprint, objstore.ID(flowdoc.ContentHash(blk))
	}
}

func BenchmarkAcceptBlock50(b *testing.B)   { benchAccept(b, 50) }
func BenchmarkAcceptBlock1000(b *testing.B) { benchAccept(b, 1000) }

// BenchmarkSaveMerge measures what `folio bench sync --editors-per-doc 10
// [--same-block]` asks of the repository, one save at a time: 10 editors
// of a 200-block document take turns, each saving from the seq of its
// own last save (so 9 saves behind), either each into its own block
// (own) or all into one paragraph, inserting a word at a place of their
// own and saving with merge (same). The paragraph starts again from 30
// words every 150 saves, as long as it grows in a bench run. It reports
// the process's CPU time per save beside the wall time, which the fsync
// of every save dominates.
//
//	go test ./internal/repo -run '^$' -bench SaveMerge -benchtime 1500x
func BenchmarkSaveMerge(b *testing.B) {
	const editors = 10
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := strings.Fields(strings.Repeat("words of a paragraph that grows ", 6))
	for _, same := range []bool{false, true} {
		name := "own"
		if same {
			name = "same"
		}
		b.Run(name, func(b *testing.B) {
			r := newRepo(b)
			doc := create(b, r, 200)
			seqs := make([]uint64, editors)
			words := make([][]string, editors)
			d0, err := r.Draft(ctx, doc)
			if err != nil {
				b.Fatal(err)
			}
			last := d0.Seq // the draft's
			reset := func() {
				blk := para("b0", strings.Join(start, " "))
				res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: last, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
				if err != nil {
					b.Fatal(err)
				}
				last = res.Seq
				for k := range seqs {
					seqs[k], words[k] = res.Seq, start
				}
			}
			reset()
			var off time.Duration
			b.ResetTimer()
			c0 := cpu()
			for i := 0; i < b.N; i++ {
				if same && i > 0 && i%150 == 0 {
					c := cpu()
					reset()
					off += cpu() - c
				}
				k := i % editors
				blk := para(fmt.Sprintf("b%d", 1+k), fmt.Sprintf("Autosaved paragraph, revision %d, of the load generator: a sentence or two of ordinary prose.", i))
				var ws []string
				if same {
					ws = slices.Insert(slices.Clone(words[k]), len(words[k])*k/editors, fmt.Sprintf("w%d.%d", k, i))
					blk = para("b0", strings.Join(ws, " "))
				}
				stale := seqs[k] != last
				res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: fmt.Sprintf("e%d", k), BaseSeq: seqs[k], Merge: same,
					Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
				if err != nil {
					b.Fatalf("save %d: %v", i, err)
				}
				seqs[k], words[k], last = res.Seq, ws, res.Seq
				if same {
					if stale && len(res.Merged) != 1 {
						b.Fatalf("save %d was not merged", i)
					}
					for _, m := range res.Merged {
						words[k] = strings.Fields(flowdoc.PlainText(m.Block.RichText))
					}
				}
			}
			b.ReportMetric(float64((cpu()-c0-off).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
