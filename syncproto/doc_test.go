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
	for _, code := range []syncproto.Code{syncproto.CodeBadMessage, syncproto.CodeUnknownType, syncproto.CodeBadRequest,
		syncproto.CodeNotFound, syncproto.CodeNotOpen, syncproto.CodeInvalidDocument, syncproto.CodeConflict,
		syncproto.CodeRateLimited, syncproto.CodeTooManySubscriptions, syncproto.CodeAlreadySubscribed,
		syncproto.CodeNotSubscribed, syncproto.CodeHelloRequired, syncproto.CodeUnavailable, syncproto.CodeInternal, syncproto.CodeReadOnly,
		syncproto.CodeStorageFull, syncproto.CodeStorageFailed} {
		if !strings.Contains(string(doc), "| `"+string(code)+"` |") {
			t.Errorf("error code %s is not in the table of docs/protocol.md", code)
		}
	}
	for _, code := range []websocket.StatusCode{syncproto.CloseAuthFailed, syncproto.CloseTokenRevoked, syncproto.CloseSlowConsumer,
		syncproto.CloseShutdown, syncproto.CloseProtocolError, syncproto.CloseStorageFailed} {
		if !strings.Contains(string(doc), fmt.Sprintf("| %d |", code)) {
			t.Errorf("close code %d is not in the table of docs/protocol.md", code)
		}
	}
}
