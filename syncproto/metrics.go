package syncproto

import (
	"strconv"
	"time"

	"github.com/coder/websocket"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the server's Prometheus collectors. A nil *Metrics records
// nothing.
type Metrics struct {
	connections      prometheus.Gauge
	connectionsTotal prometheus.Counter
	messagesIn       *prometheus.CounterVec
	messagesOut      *prometheus.CounterVec
	saves            *prometheus.CounterVec
	checkpoints      *prometheus.CounterVec
	conflicts        prometheus.Counter
	ackLatency       prometheus.Histogram
	closes           *prometheus.CounterVec
	queueHighWater   prometheus.Histogram
}

// NewMetrics creates the collectors and registers them with reg (the
// daemon's registry, served at /metrics).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "folio_sync_connections", Help: "Open sync WebSocket connections."}),
		connectionsTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "folio_sync_connections_total", Help: "Sync WebSocket connections accepted."}),
		messagesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_sync_messages_received_total", Help: "Messages received, by type."}, []string{"type"}),
		messagesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_sync_messages_sent_total", Help: "Messages queued for sending, by type."}, []string{"type"}),
		saves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_sync_saves_total", Help: "Draft saves, by result (ack, conflict, invalid, error, retry: a keyed save answered with its remembered ack; merged: an acknowledged save that merged inside a block, counted as ack too)."}, []string{"result"}),
		checkpoints: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_sync_checkpoints_total", Help: "Checkpoints sealed by the sync server, by reason."}, []string{"reason"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "folio_sync_conflicts_total", Help: "Draft saves answered with draft.conflict."}),
		ackLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "folio_sync_ack_latency_seconds",
			Help:    "Time from receiving a draft.save to queuing its draft.ack.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}),
		closes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_sync_closes_total", Help: "Connections closed by the server, by close code."}, []string{"code"}),
		queueHighWater: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "folio_sync_send_queue_high_water",
			Help:    "Largest send queue length of each finished connection.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
		}),
	}
	for _, c := range []prometheus.Collector{m.connections, m.connectionsTotal, m.messagesIn, m.messagesOut,
		m.saves, m.checkpoints, m.conflicts, m.ackLatency, m.closes, m.queueHighWater} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) connOpened() {
	if m != nil {
		m.connections.Inc()
		m.connectionsTotal.Inc()
	}
}

func (m *Metrics) connClosed(highWater int) {
	if m != nil {
		m.connections.Dec()
		m.queueHighWater.Observe(float64(highWater))
	}
}

// Every label value comes from a fixed set: a value taken from what a
// client sends (or from a stored event) would add a series per distinct
// value to /metrics, for ever. Unknown values count as "other".

// typeLabel is a message or event type of the protocol, "invalid", or
// "other".
func typeLabel(typ string) string {
	switch typ {
	case TypeHello, TypeOpen, TypeLeave, TypeSave, TypeCheckpoint, TypeRestore, TypeSubscribe,
		TypeUnsubscribe, TypePing, TypeWelcome, TypeSnapshot, TypeLeft, TypeAck, TypeConflict,
		TypeCheckpointDone, TypeRestoreDone, TypeSubscribed, TypeUnsubscribed, TypePong, TypeError,
		TypeResync, TypeDraftUpdated, TypeVersionCreated, TypeOwnerChanged, "invalid":
		return typ
	}
	return "other"
}

// closeLabel is a close code the server sends, or "other".
func closeLabel(code websocket.StatusCode) string {
	switch code {
	case CloseNormal, CloseTooLarge, CloseAuthFailed, CloseTokenRevoked, CloseSlowConsumer,
		CloseShutdown, CloseProtocolError, CloseStorageFailed, CloseAccessWithdrawn, websocket.StatusGoingAway,
		websocket.StatusPolicyViolation, websocket.StatusInternalError:
		return strconv.Itoa(int(code))
	}
	return "other"
}

// reasonLabel is a checkpoint reason, or "other".
func reasonLabel(reason string) string {
	switch reason {
	case ReasonIdle, ReasonMaxDuration, ReasonAI, ReasonRestore,
		ReasonPublish, ReasonLeave, ReasonManual, ReasonRecovery:
		return reason
	}
	return "other"
}

func (m *Metrics) received(typ string) {
	if m != nil {
		m.messagesIn.WithLabelValues(typeLabel(typ)).Inc()
	}
}

func (m *Metrics) sent(typ string) {
	if m != nil {
		m.messagesOut.WithLabelValues(typeLabel(typ)).Inc()
	}
}

func (m *Metrics) save(result string, d time.Duration) {
	if m == nil {
		return
	}
	m.saves.WithLabelValues(result).Inc()
	switch result {
	case "ack":
		m.ackLatency.Observe(d.Seconds())
	case "conflict":
		m.conflicts.Inc()
	}
}

// Checkpoint counts a checkpoint sealed for the documents this server
// serves by a rule of the repository (idle, max_duration), which the
// server does not see: the daemon reports them here (repo.OnCheckpoint).
func (m *Metrics) Checkpoint(reason string) { m.checkpoint(reason) }

func (m *Metrics) checkpoint(reason string) {
	if m != nil {
		m.checkpoints.WithLabelValues(reasonLabel(reason)).Inc()
	}
}

func (m *Metrics) closed(code websocket.StatusCode) {
	if m != nil {
		m.closes.WithLabelValues(closeLabel(code)).Inc()
	}
}
