package syncproto_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestProtocolImportsNoStorage: the protocol and its client depend on
// neither the repository nor the store. Their wire types are their own
// (the adapter is internal/server/syncrepo), so a browser client can be
// written from docs/protocol.md and the Go client does not drag the
// storage engine along.
func TestProtocolImportsNoStorage(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	forbidden := []string{
		"github.com/foliodev/folio/internal/repo",
		"github.com/foliodev/folio/internal/kv",
		"github.com/foliodev/folio/internal/stream",
		"github.com/foliodev/folio/objstore",
		"github.com/cockroachdb/pebble",
	}
	for _, pkg := range []string{"github.com/foliodev/folio/syncproto", "github.com/foliodev/folio/syncproto/client"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 5 {
			t.Fatalf("go list -deps %s listed only %v", pkg, deps)
		}
		for _, d := range deps {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
}
