package syncproto_test

import (
	"errors"
	"testing"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/syncproto"
	"github.com/prometheus/client_golang/prometheus"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := syncproto.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := startEnv(t, func(c *syncproto.Config) { c.Metrics = m })
	ctx := ctxT(t)
	a := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	snap, _ := a.Open(ctx, "d1")
	if _, err := a.Save(ctx, "d1", snap.Seq, upsert("p1", "x")); err != nil {
		t.Fatal(err)
	}
	var ce *folio.ConflictError
	if _, err := a.Save(ctx, "d1", snap.Seq, upsert("p1", "y")); !errors.As(err, &ce) {
		t.Fatal(err)
	}
	if _, err := a.Checkpoint(ctx, "d1", "", ""); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range mt.GetLabel() {
				name += "{" + l.GetValue() + "}"
			}
			switch {
			case mt.Counter != nil:
				got[name] = mt.GetCounter().GetValue()
			case mt.Gauge != nil:
				got[name] = mt.GetGauge().GetValue()
			case mt.Histogram != nil:
				got[name] = float64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	for name, want := range map[string]float64{
		"folio_sync_saves_total{ack}":                    1,
		"folio_sync_saves_total{conflict}":               1,
		"folio_sync_conflicts_total":                     1,
		"folio_sync_checkpoints_total{manual}":           1,
		"folio_sync_connections":                         1,
		"folio_sync_connections_total":                   1,
		"folio_sync_ack_latency_seconds":                 1,
		"folio_sync_messages_received_total{hello}":      1,
		"folio_sync_messages_received_total{draft.save}": 2,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
}
