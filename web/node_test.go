package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestNode runs the editor's JavaScript tests (the codec's round trips over
// docs/flowdoc.md, the sync module's client algorithm) with node's test
// runner, so that `make test` covers them. Without node or web/node_modules
// (`npm ci` in web/) it skips and says so, except under CI=true, where it
// fails.
func TestNode(t *testing.T) {
	node, err := exec.LookPath("node")
	missing := ""
	if err != nil {
		missing = "node is not installed (apt-get install -y nodejs npm)"
	} else if _, err := os.Stat(filepath.Join("node_modules", "@tiptap", "core")); err != nil {
		missing = "web/node_modules is missing (run npm ci in web/)"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("the editor's JavaScript tests cannot run: " + missing)
		}
		t.Skip("SKIPPING the editor's JavaScript tests: " + missing)
	}
	cmd := exec.Command(node, "--test", "--test-reporter=dot", "test/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test test/: %v\n%s", err, out)
	}
	t.Logf("node --test test/:\n%s", out)
}
