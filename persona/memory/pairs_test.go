package memory

import (
	"fmt"
	"testing"
)

// TestCandidatePairsAreBounded: items sharing one place are compared
// whole in a small group, and in a group of any size each item with at
// most 2·maxRelations others, so the projection is linear in its input.
func TestCandidatePairsAreBounded(t *testing.T) {
	mk := func(n int) []Item {
		var items []Item
		for i := 0; i < n; i++ {
			items = append(items, Item{Key: fmt.Sprint(i), Type: TypeWork, Places: []string{"Berlin", "Berlin"}, Orgs: []string{fmt.Sprint("org", i%3)}})
		}
		return items
	}
	id := func(it Item) Item { return it }
	small := candidatePairs(mk(maxRelations+1), id)
	if want := (maxRelations + 1) * maxRelations / 2; len(small) != want {
		t.Fatalf("a group of %d: %d pairs, want every one (%d)", maxRelations+1, len(small), want)
	}
	const n = 5000
	big := candidatePairs(mk(n), id)
	if len(big) > n*maxRelations*2 {
		t.Fatalf("%d items: %d pairs, want at most %d", n, len(big), n*maxRelations*2)
	}
	for i := 1; i < len(big); i++ {
		if a, b := big[i-1], big[i]; a[0] > b[0] || a[0] == b[0] && a[1] >= b[1] {
			t.Fatalf("pairs out of order at %d: %v %v", i, a, b)
		}
	}
	in := []Input{{Observations: nil}}
	for i, it := range mk(n) {
		in[0].Observations = append(in[0].Observations, Observation{Key: fmt.Sprint("o", i),
			Fact: Fact{Type: it.Type, Statement: fmt.Sprint("worked ", i), Places: it.Places, Orgs: it.Orgs, Numbers: []Number{{Value: fmt.Sprint(i)}}}})
	}
	snap, err := Project("u", "p", in)
	if err != nil || len(snap.Items) != n {
		t.Fatalf("projection: %d items, %v", len(snap.Items), err)
	}
	for _, it := range snap.Items {
		if len(it.Relations) > maxRelations || len(it.Relations) == 0 {
			t.Fatalf("item %s has %d relations", it.Key, len(it.Relations))
		}
	}
}
