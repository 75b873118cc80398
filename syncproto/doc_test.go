package syncproto_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coder/websocket"
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
