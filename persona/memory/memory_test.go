package memory

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/persona/source"
)

func srcDoc(name string, time int64, paras ...string) source.Document {
	pin := source.Pin{Doc: name, Label: "v1.r0", Version: source.VersionID(sha256.Sum256([]byte(name))),
		Fingerprint: flowdoc.Fingerprint(sha256.Sum256([]byte("fp" + name))), Time: time}
	d := source.Document{Pin: pin}
	for i, p := range paras {
		d.Blocks = append(d.Blocks, source.Block{ID: fmt.Sprintf("b%d", i), Type: flowdoc.Paragraph, Text: p})
	}
	return d
}

func project(t *testing.T, docs ...source.Document) Snapshot {
	t.Helper()
	var in []Input
	for _, d := range docs {
		in = append(in, Input{Pin: d.Pin, Observations: Observe(d)})
	}
	s, err := Project("author-a", "p1", in)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func item(t *testing.T, s Snapshot, stmt string) Item {
	t.Helper()
	for _, it := range s.Items {
		if it.Statement == stmt {
			return it
		}
	}
	t.Fatalf("no item %q in %+v", stmt, s.Items)
	return Item{}
}

func TestProjectRefusesSnapshotWithoutPersona(t *testing.T) {
	if _, err := Project("author-a", "", nil); !errors.Is(err, ErrNoPersona) {
		t.Fatalf("err %v, want ErrNoPersona", err)
	}
	if _, err := Project("", "p1", nil); !errors.Is(err, ErrNoPersona) {
		t.Fatalf("err %v, want ErrNoPersona", err)
	}
}

func TestObservationsCarryVerifiableEvidence(t *testing.T) {
	d := srcDoc("a", 1, "开头一句。2019年我加入了字节跳动公司，负责推荐系统。", "今天天气很好。")
	obs := Observe(d)
	if len(obs) != 1 {
		t.Fatalf("%d observations", len(obs))
	}
	ev := obs[0].Evidence
	if !ev.Verify(d) || ev.Block != "b0" || source.Slice(d.Blocks[0].Text, ev.Span) != obs[0].Fact.Statement {
		t.Fatalf("evidence %+v does not point at %q", ev, obs[0].Fact.Statement)
	}
	if again := Observe(d); again[0].Key != obs[0].Key {
		t.Fatal("observation keys are not stable")
	}
}

func TestSameFactFromTwoSourcesMerges(t *testing.T) {
	s := project(t, srcDoc("a", 1, "2019年我加入了字节跳动公司。"), srcDoc("b", 2, "我在2019年加入了字节跳动公司，那年很忙。"))
	if len(s.Items) != 1 {
		t.Fatalf("%d items, want 1: %+v", len(s.Items), s.Items)
	}
	it := s.Items[0]
	if len(it.Evidence) != 2 || it.Confidence != 0.91 || it.Status != StatusSupported {
		t.Fatalf("merged item: %d evidence, confidence %v, status %s", len(it.Evidence), it.Confidence, it.Status)
	}
	if docs := it.Docs(); len(docs) != 2 {
		t.Fatalf("docs %v", docs)
	}
}

func TestConflictsSupersedesSupportsRestricted(t *testing.T) {
	s := project(t,
		srcDoc("a", 100, "我1990年出生于杭州。", "2015年我住在成都。", "2019年我加入了星火公司。", "我在星火公司带过12个人。"),
		srcDoc("b", 200, "我1991年出生于杭州。", "2020年我搬到了上海。", "2021年我做了一次手术。"))
	b90, b91 := item(t, s, "我1990年出生于杭州。"), item(t, s, "我1991年出生于杭州。")
	if b90.Status != StatusConflicted || b91.Status != StatusConflicted {
		t.Errorf("birth years: %s %s, want conflicted", b90.Status, b91.Status)
	}
	if b90.Confidence != 0.35 || !hasRel(b90, RelConflicts, b91.Key) || !hasRel(b91, RelConflicts, b90.Key) {
		t.Errorf("birth 1990: confidence %v relations %v", b90.Confidence, b90.Relations)
	}
	sh, cd := item(t, s, "2020年我搬到了上海。"), item(t, s, "2015年我住在成都。")
	if !hasRel(sh, RelSupersedes, cd.Key) || hasRel(cd, RelSupersedes, sh.Key) {
		t.Errorf("residence: shanghai %v, chengdu %v", sh.Relations, cd.Relations)
	}
	join, team := item(t, s, "2019年我加入了星火公司。"), item(t, s, "我在星火公司带过12个人。")
	if !hasRel(join, RelSupports, team.Key) || !hasRel(team, RelSupports, join.Key) {
		t.Errorf("shared organisation: %v / %v", join.Relations, team.Relations)
	}
	if op := item(t, s, "2021年我做了一次手术。"); op.Status != StatusRestricted || op.Sensitivity != SensitivityHigh {
		t.Errorf("surgery: %s %s", op.Status, op.Sensitivity)
	}
	if cd.Sensitivity != SensitivityMedium || join.Sensitivity != SensitivityLow {
		t.Errorf("sensitivity: residence %s, work %s", cd.Sensitivity, join.Sensitivity)
	}
}

func TestPrivateSourcesRaiseSensitivity(t *testing.T) {
	d := srcDoc("a", 1, "2019年我加入了星火公司。")
	s, err := Project("author-a", "p1", []Input{{Pin: d.Pin, Private: true, Observations: Observe(d)}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Items[0].Sensitivity != SensitivityMedium {
		t.Fatalf("sensitivity %s", s.Items[0].Sensitivity)
	}
}

func hasRel(it Item, kind, key string) bool {
	for _, r := range it.Relations {
		if r.Kind == kind && r.Item == key {
			return true
		}
	}
	return false
}
