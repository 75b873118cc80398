package syncproto_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/syncproto"
)

// TestProtocolDocExamples keeps docs/protocol.md true to the code: every
// json example decodes, and the examples are exactly the wire form the
// codec produces (testdata/messages.golden), each message type shown.
func TestProtocolDocExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "messages.golden"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(golden)), "\n") {
		want[l] = false
	}
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllStringSubmatch(string(doc), -1) {
		ex := m[1]
		if _, err := syncproto.JSONCodec.Decode([]byte(ex), true); err != nil {
			t.Errorf("example does not decode: %v\n%s", err, ex)
		}
		if _, ok := want[ex]; !ok {
			t.Errorf("example is not the codec's wire form (see testdata/messages.golden):\n%s", ex)
		}
		want[ex] = true
	}
	for l, seen := range want {
		if !seen {
			t.Errorf("docs/protocol.md lacks the example:\n%s", l)
		}
	}
	// Every specific code is in the table with its kind.
	for code, kind := range syncproto.SpecificCodes() {
		if !strings.Contains(string(doc), "| `"+string(code)+"` | `"+kind.String()+"` |") {
			t.Errorf("error code %s (kind %s) is not in the table of docs/protocol.md", code, kind)
		}
	}
	// The shared codes are their kinds' default codes.
	for _, code := range []syncproto.Code{syncproto.CodeInvalid, syncproto.CodeNotFound, syncproto.CodeConflict,
		syncproto.CodeRateLimited, syncproto.CodeUnavailable, syncproto.CodeInternal, syncproto.CodeStorageFailed, syncproto.CodeStorageFull} {
		if code.Kind().String() != string(code) {
			t.Errorf("shared code %s is not the default code of a kind", code)
		}
	}
	for _, code := range []websocket.StatusCode{syncproto.CloseAuthFailed, syncproto.CloseTokenRevoked, syncproto.CloseSlowConsumer,
		syncproto.CloseShutdown, syncproto.CloseProtocolError, syncproto.CloseStorageFailed} {
		if !strings.Contains(string(doc), fmt.Sprintf("| %d |", code)) {
			t.Errorf("close code %d is not in the table of docs/protocol.md", code)
		}
	}
}

// TestProtocolDocDefaults keeps every default docs/protocol.md states
// true to the code: the limits table against syncproto.DefaultConfig and
// the daemon's configuration defaults (which the daemon passes on), the
// checkpoint rules, the per-request limits and the save keys' bounds.
func TestProtocolDocDefaults(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	sc, dc := syncproto.DefaultConfig(), config.Default()

	// The daemon's defaults are the package's.
	if dc.Limits.FrameBytes != sc.MaxFrame || float64(dc.Limits.MessagesPerSecond) != sc.MessagesPerSecond ||
		dc.Limits.Subscriptions != sc.MaxSubscriptions || dc.Checkpoint.Idle != repo.DefaultCheckpointIdle || dc.Checkpoint.Max != repo.DefaultCheckpointMax {
		t.Errorf("the daemon's defaults %+v %+v differ from syncproto's %+v", dc.Limits, dc.Checkpoint, sc)
	}
	// The limits table: its default column, row by row.
	rows := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| (.+?) \| (.+?) \| .+ \|$`).FindAllStringSubmatch(doc, -1) {
		rows[m[1]] = m[2]
	}
	want := map[string]string{
		"`maxFrame`: largest frame a client may send":                                                          bytesText(sc.MaxFrame),
		"`messagesPerSecond` / `burst`: token bucket over all requests":                                        fmt.Sprintf("%g/s, burst %d", sc.MessagesPerSecond, sc.Burst),
		"`maxSubscriptions`: subscriptions plus open documents":                                                fmt.Sprint(sc.MaxSubscriptions),
		"`sendQueue`: frames waiting to be written (also " + bytesText(int64(sc.SendQueueBytes)) + " of them)": fmt.Sprint(sc.SendQueue),
		"hello timeout": durText(sc.HelloTimeout),
		"lag timeout: how long stream delivery waits for room in a full queue":                             durText(sc.LagTimeout),
		"write timeout: one write to the socket (a frame, or the frames queued together, written at once)": durText(sc.WriteTimeout),
		"ping interval: WebSocket pings; no pong within it":                                                durText(sc.PingInterval),
	}
	for row, def := range want {
		got, ok := rows[row]
		if !ok {
			t.Errorf("docs/protocol.md Limits has no row %q (default %s)", row, def)
		} else if got != def {
			t.Errorf("docs/protocol.md Limits: %s is %q, the code's default is %q", row, got, def)
		}
	}
	// The welcome example announces the default limits.
	lim, _ := json.Marshal(syncproto.DefaultLimits())
	if !strings.Contains(doc, `"limits":`+string(lim)) {
		t.Errorf("the welcome example does not announce the default limits %s", lim)
	}
	// Sentences that state defaults.
	for _, s := range []string{
		fmt.Sprintf("| `idle` | %s (`checkpoint.idle`)", durText(repo.DefaultCheckpointIdle)),
		fmt.Sprintf("the draft has been unsealed for %s (`checkpoint.max`)", durText(repo.DefaultCheckpointMax)),
		fmt.Sprintf("at most `save_max_changes` changes (%s)", thousands(dc.Limits.SaveMaxChanges)),
		fmt.Sprintf("`doc_max_blocks` blocks (%s)", thousands(dc.Limits.DocMaxBlocks)),
		fmt.Sprintf("(%s). Field sizes", thousands(dc.Limits.RequestMaxRuns)),
		fmt.Sprintf("memory for %s (`SaveKeyTTL`), at most %s of them (`SaveKeyBytes`", durText(sc.SaveKeyTTL), bytesText(int64(sc.SaveKeyBytes))),
		fmt.Sprintf("within **%s** of the upgrade", durText(sc.HelloTimeout)),
	} {
		if !strings.Contains(strings.Join(strings.Fields(doc), " "), s) {
			t.Errorf("docs/protocol.md does not say %q", s)
		}
	}
}

func durText(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmt.Sprintf("%d s", d/time.Second)
}

func bytesText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprint(n)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
