package objstore_test

import (
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

var words = strings.Fields(`the a of and to in is that it for was on are as with his they at be this
from have or by one had not but what all were when we there can an your which their said if do will
each about how up out them then she many some so these would other into has more her two like him see
time could no make than first been its who now people my made over did down only way find use may water
long little very after words called just where most know get through back much before go good new write
our used me man too any day same right look think also around another came come work three word must
because does part even place well such here take why things help put years different away again off went
old number great tell men say small every found still between name should home big give air line set own
under read last never us left end along while might next sound below saw something thought both few those
always looked show large often together asked house don't world going want school important until form food
keep children feet land side without boy once animals life enough took sometimes four head above kind began
almost live page got earth need far hand high year mother light parts country father let night following
picture being study second eyes soon times story boys since white days ever paper hard near sentence better
best across during today others however sure means knew it's try told young miles sun ways thing whole hear
example heard several change answer room sea against top turned learn point city play toward five using
himself usually`)

func sentence(r *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(words[r.Intn(len(words))])
	}
	return sb.String() + "."
}

func blockID(r *rand.Rand) string {
	const alpha = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 10)
	for i := range b {
		b[i] = alpha[r.Intn(len(alpha))]
	}
	return string(b)
}

// simResult is what simulateCheckpoints measures.
type simResult struct {
	N          int
	Elapsed    time.Duration
	TableBytes int64
	DiskBytes  int64
	DirBytes   int64 // the whole data directory after a reopen
}

func (r simResult) String() string {
	return fmt.Sprintf("%d checkpoints: %.0f checkpoints/s, %.0f B/checkpoint in sstables, %.0f B/checkpoint on disk, %.0f B/checkpoint directory after reopen",
		r.N, float64(r.N)/r.Elapsed.Seconds(), float64(r.TableBytes)/float64(r.N), float64(r.DiskBytes)/float64(r.N), float64(r.DirBytes)/float64(r.N))
}

// simulateCheckpoints writes n checkpoints of a 200-block document the way
// the repository does (new contents for 1-3 changed blocks, a txn, a
// version, three small index keys and the head ref with its reflog entry,
// one synced batch each) and measures time and size after compaction.
func simulateCheckpoints(tb testing.TB, n int) simResult {
	return simulateCheckpointsDir(tb, n, tb.TempDir())
}

func simulateCheckpointsDir(tb testing.TB, n int, dir string) simResult {
	tb.Helper()
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		tb.Fatal(err)
	}
	st := objstore.New(db)
	rs := refs.New(db)
	r := rand.New(rand.NewSource(1))
	const nblocks = 200
	doc := "d" + blockID(r)
	body := flowdoc.Document{SchemaVersion: 1}
	for i := 0; i < nblocks; i++ {
		body.Blocks = append(body.Blocks, flowdoc.Block{ID: blockID(r), Type: flowdoc.Paragraph,
			RichText: []flowdoc.Run{{Text: sentence(r, 60+r.Intn(60))}}})
	}
	entries := make([]objstore.BlockEntry, nblocks)
	attrs := flowdoc.Attributes{Title: "A benchmark article", Status: "draft"}

	// The first version: every block is new.
	var head objstore.ID
	var headFP flowdoc.Fingerprint
	start := time.Now()
	t0 := int64(1_780_000_000_000)
	for seq := 1; seq <= n; seq++ {
		b := db.NewBatch()
		txn := &objstore.Txn{Doc: doc, Actor: "u1", Kind: objstore.KindCheckpoint, Reason: objstore.ReasonIdle,
			BaseVersion: head, BaseFingerprint: headFP, Time: t0 + int64(seq)*31_000}
		var changed []int
		if seq == 1 {
			txn.Kind = objstore.KindCreate
			txn.Reason = ""
			for i := range body.Blocks {
				changed = append(changed, i)
			}
		} else {
			for k := 1 + r.Intn(3); k > 0; k-- {
				i := r.Intn(nblocks)
				body.Blocks[i].RichText = []flowdoc.Run{{Text: sentence(r, 60+r.Intn(60))}}
				changed = append(changed, i)
			}
		}
		for _, i := range changed {
			id, err := st.Put(b, objstore.KindContent, flowdoc.EncodeContent(body.Blocks[i]))
			if err != nil {
				tb.Fatal(err)
			}
			ev := objstore.TxnEvent{Op: objstore.EventModify, BlockID: body.Blocks[i].ID, Before: entries[i].Content, After: id}
			if seq == 1 {
				ev.Op = objstore.EventAdd
			}
			entries[i] = objstore.BlockEntry{ID: body.Blocks[i].ID, Content: id}
			txn.Events = append(txn.Events, ev)
		}
		tid, err := st.PutTxn(b, txn)
		if err != nil {
			tb.Fatal(err)
		}
		fp := flowdoc.Fingerprint(sha256.Sum256(kv.Uint64(nil, uint64(seq)))) // stands in for flowdoc.FingerprintOf(body)
		v := &objstore.Version{Doc: doc, Seq: uint64(seq), Label: fmt.Sprintf("v1.r%d", seq-1), Kind: txn.Kind,
			Reason: txn.Reason, Blocks: append([]objstore.BlockEntry(nil), entries...), Attrs: attrs,
			Fingerprint: fp, Txn: tid, Author: "u1", Time: txn.Time}
		if !head.IsZero() {
			v.Parents = []objstore.ID{head}
		}
		vid, err := st.PutVersion(b, v)
		if err != nil {
			tb.Fatal(err)
		}
		// The repository's own index keys: block revisions and the version
		// by label, about 40 bytes each.
		for k, i := range changed {
			if k == 3 {
				break
			}
			key := kv.Uint64(kv.TableKey("blk", doc, body.Blocks[i].ID), uint64(seq))
			if err := b.Set(key, entries[i].Content[:8]); err != nil {
				tb.Fatal(err)
			}
		}
		if err := b.Set(kv.TableKey("lbl", doc, v.Label), kv.Uint64(nil, uint64(seq))); err != nil {
			tb.Fatal(err)
		}
		if err := rs.Update(b, []refs.Update{{Name: "docs/" + doc + "/head", Old: head, New: vid}}, "checkpoint"); err != nil {
			tb.Fatal(err)
		}
		head, headFP = vid, fp
	}
	res := simResult{N: n, Elapsed: time.Since(start)}
	if err := db.CompactAll(); err != nil {
		tb.Fatal(err)
	}
	res.TableBytes = db.TableBytes()
	res.DiskBytes = db.DiskUsage()
	if testing.Verbose() {
		type agg struct{ n, k, v int }
		cats := map[string]*agg{}
		it, _ := db.NewIter(nil)
		for it.First(); it.Valid(); it.Next() {
			c := string(it.Key()[:2])
			if c == "o/" {
				c = fmt.Sprintf("o/ kind %d codec %d", it.Value()[1], it.Value()[0])
			}
			if c == "t/" {
				c = string(it.Key()[:5])
			}
			if cats[c] == nil {
				cats[c] = &agg{}
			}
			cats[c].n++
			cats[c].k += len(it.Key())
			cats[c].v += len(it.Value())
		}
		it.Close()
		for c, a := range cats {
			tb.Logf("%-22s %6d keys, key bytes/ckpt %6.1f, value bytes/ckpt %7.1f", c, a.n, float64(a.k)/float64(n), float64(a.v)/float64(n))
		}
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	// Reopening deletes the write-ahead logs Pebble kept for reuse.
	if db, err = kv.Open(dir, kv.Options{}); err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	res.DirBytes = dirSize(tb, dir)
	return res
}

func dirSize(tb testing.TB, dir string) int64 {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestCheckpointSize guards issue 2's storage goal: 1,000 checkpoints of a
// 200-block document must stay far below the 8 KB a whole version costs,
// within reach of git's ~540 B per commit (see BenchmarkCheckpointStore).
func TestCheckpointSize(t *testing.T) {
	res := simulateCheckpoints(t, 1000)
	t.Log(res)
	if per := float64(res.DirBytes) / float64(res.N); per > 750 {
		t.Fatalf("%.0f bytes per checkpoint on disk, want at most 750", per)
	}
}
