package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestREADMECommands runs the README's commands as a newcomer would: it
// builds folio with the README's own `make install` (into a temporary
// directory put first on PATH), then runs every line of the fenced blocks
// of "Using the CLI" and "Running the daemon", each verbatim in bash, in an
// empty directory. Exported variables carry from one line to the next as
// in one interactive shell. It fails when a line exits non-zero, when a
// line's key output is missing, or when what the lines claim to do did
// not happen (the git copy, the backup round trip, the revoked token).
//
// Three things a reader copies from the daemon's output are substituted
// in the daemon section, and only there:
//
//	http://127.0.0.1:7420   the URL of the daemon the test started
//	folio_…                 the admin token that daemon printed
//	folio_3f2a9c0d1e2b      the token id the last `user add`/`token add` printed
//
// The lines of "Writing assistant" run last, against the same daemon, with
// the same substitutions and one more:
//
//	s4kq2m7rtx3vwz5na       the suggestion id the last `folio assist` printed
//
// The `folio serve` line runs as a child process (FOLIO_LISTEN picks a free
// port) until the end of the test, when it gets SIGTERM and must exit 0.
// It needs bash, make and git; the curl line is skipped (and logged) on a
// machine without curl.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds folio with make install and runs the README's commands")
	}
	for _, tool := range []string{"bash", "make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README test needs %s on PATH: %v", tool, err)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin, work := filepath.Join(tmp, "bin"), filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	sh := newReadmeShell(t, filepath.Join(tmp, "env"), bin)
	exp := newReadmeExpectations()

	// The binary, as the README builds it.
	var install readmeLine
	for _, b := range readmeBlocks(t, readme, "# Folio") {
		for _, l := range b {
			if install.text == "" && strings.HasPrefix(l.text, "make install") {
				install = l
			}
		}
	}
	if install.text == "" {
		t.Fatal("README: no `make install` line in the introduction")
	}
	sh.run(install, root)
	if _, err := os.Stat(filepath.Join(bin, "folio")); err != nil {
		t.Fatalf("README line %d: %q did not install folio: %v", install.n, install.text, err)
	}
	folioBin := filepath.Join(bin, "folio")

	// Direct mode.
	for _, b := range readmeBlocks(t, readme, "## Using the CLI") {
		for _, l := range b {
			out := sh.run(l, work)
			exp.check(t, l, out)
		}
	}
	var log []logEntry
	out := runBin(t, work, sh.env, folioBin, "log", "notes", "--format", "json")
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log) == 0 {
		t.Fatalf("log after the README's CLI section: %v\n%s", err, out)
	}
	if n := strings.TrimSpace(runBin(t, work, sh.env, "git", "-C", "notes-git", "rev-list", "--count", "main")); n != fmt.Sprint(len(log)) {
		t.Fatalf("the git copy has %s commits on main, the document %d versions", n, len(log))
	}

	// The daemon.
	var d *readmeDaemon
	var lastTokenID, authorSecret string
	for _, b := range readmeBlocks(t, readme, "## Running the daemon") {
		for _, l := range b {
			if strings.HasPrefix(l.text, "folio serve") {
				if d != nil {
					t.Fatalf("README line %d: a second `folio serve`", l.n)
				}
				d = startReadmeDaemon(t, sh, l, work)
				continue
			}
			if d != nil {
				l.text = strings.ReplaceAll(l.text, "http://127.0.0.1:7420", d.url)
				l.text = strings.ReplaceAll(l.text, "folio_…", d.token)
				if strings.Contains(l.text, "folio_3f2a9c0d1e2b") {
					if lastTokenID == "" {
						t.Fatalf("README line %d names a token id before any command printed one", l.n)
					}
					l.text = strings.ReplaceAll(l.text, "folio_3f2a9c0d1e2b", lastTokenID)
				}
			}
			if strings.HasPrefix(l.text, "curl ") {
				if _, err := exec.LookPath("curl"); err != nil {
					t.Logf("README line %d skipped: no curl on this machine", l.n)
					exp.skip(l)
					continue
				}
			}
			out := sh.run(l, work)
			exp.check(t, l, out)
			if strings.HasPrefix(l.text, "folio user add") || strings.HasPrefix(l.text, "folio token add") {
				lastTokenID = tokenIDRE.FindString(out)
				if strings.HasPrefix(l.text, "folio user add") {
					authorSecret = tokenSecretRE.FindString(out)
				}
			}
			if s := sh.get("FOLIO_SERVER"); s != "" && (d == nil || s != d.url) {
				t.Fatalf("README line %d: FOLIO_SERVER=%s is not the daemon the README started", l.n, s)
			}
		}
	}
	if d == nil {
		t.Fatal("README: no `folio serve` line in \"Running the daemon\"")
	}

	// What the daemon lines claim: the mirror restored the same history,
	// and the revoked token opens nothing.
	remote := []string{"--server", d.url, "--token", d.token}
	served := runBin(t, work, sh.env, folioBin, append(remote, "log", "notes", "--format", "json")...)
	restored := runBin(t, work, sh.env, folioBin, "--data", "restored", "log", "notes", "--format", "json")
	if labelsAndHashes(t, served) != labelsAndHashes(t, restored) {
		t.Fatalf("restored from the mirror:\n%s\nthe daemon's:\n%s", restored, served)
	}
	if authorSecret == "" {
		t.Fatal("`folio user add` printed no token")
	}
	c := exec.Command(folioBin, "--server", d.url, "--token", authorSecret, "doc", "list")
	c.Dir, c.Env = work, sh.env
	if b, err := c.CombinedOutput(); err == nil {
		t.Fatalf("the token the README revoked still works:\n%s", b)
	}

	// The writing assistant, through the same daemon.
	var suggestion string
	for _, b := range readmeBlocks(t, readme, "## Writing assistant") {
		for _, l := range b {
			l.text = strings.ReplaceAll(l.text, "http://127.0.0.1:7420", d.url)
			l.text = strings.ReplaceAll(l.text, "folio_…", d.token)
			if strings.Contains(l.text, "s4kq2m7rtx3vwz5na") {
				if suggestion == "" {
					t.Fatalf("README line %d names a suggestion before any assist printed one", l.n)
				}
				l.text = strings.ReplaceAll(l.text, "s4kq2m7rtx3vwz5na", suggestion)
			}
			out := sh.run(l, work)
			exp.check(t, l, out)
			if strings.HasPrefix(l.text, "folio assist ") {
				suggestion = suggestionRE.FindString(out)
			}
		}
	}
	exp.all(t)
	d.stop(t)
	t.Logf("ran %d README commands", sh.count)
}

// readmeLine is one command of a fenced block and its line in README.md.
type readmeLine struct {
	n    int
	text string
}

// readmeBlocks returns the fenced code blocks of the section that starts
// with the heading line (up to the next heading of the same or a higher
// level): their non-blank, non-comment lines, continuation lines joined.
func readmeBlocks(t *testing.T, readme []byte, heading string) [][]readmeLine {
	t.Helper()
	level := strings.Index(heading, " ")
	var blocks [][]readmeLine
	in, fenced := false, false
	var cur []readmeLine
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !fenced && line == heading:
			in = true
			continue
		case !fenced && in && strings.HasPrefix(line, "#"):
			if h := strings.Index(line, " "); h > 0 && h <= level && strings.Trim(line[:h], "#") == "" {
				in = false
			}
			continue
		}
		if !in {
			continue
		}
		if strings.HasPrefix(line, "```") {
			if fenced && len(cur) > 0 {
				blocks = append(blocks, cur)
			}
			fenced, cur = !fenced, nil
			continue
		}
		if !fenced {
			continue
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if k := len(cur); k > 0 && strings.HasSuffix(cur[k-1].text, "\\") {
			cur[k-1].text = strings.TrimSuffix(cur[k-1].text, "\\") + "\n" + line
			continue
		}
		cur = append(cur, readmeLine{n: n, text: line})
	}
	if len(blocks) == 0 {
		t.Fatalf("README: no commands under %q", heading)
	}
	return blocks
}

// readmeShell runs README lines in bash, one process per line, carrying
// the exported environment from each line to the next.
type readmeShell struct {
	t       *testing.T
	envFile string
	env     []string
	count   int
}

func newReadmeShell(t *testing.T, envFile, bin string) *readmeShell {
	env := []string{"INSTALL_DIR=" + bin}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "FOLIO_"), k == "INSTALL_DIR",
			k == "MAKEFLAGS", k == "MFLAGS", k == "MAKELEVEL": // not a make inside make
		case k == "PATH":
			env = append(env, "PATH="+bin+string(os.PathListSeparator)+v)
		default:
			env = append(env, kv)
		}
	}
	return &readmeShell{t: t, envFile: envFile, env: env}
}

func (s *readmeShell) get(key string) string {
	for _, kv := range s.env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v
		}
	}
	return ""
}

// run runs l in dir and returns its standard output; a non-zero exit
// fails the test.
func (s *readmeShell) run(l readmeLine, dir string) string {
	s.t.Helper()
	s.count++
	script := "set -o pipefail\n" + l.text + "\n__readme_rc=$?\nenv -0 >" + shellQuote(s.envFile) + "\nexit $__readme_rc\n"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard, not a speed check
	defer cancel()
	os.Remove(s.envFile)
	c := exec.CommandContext(ctx, "bash", "-c", script)
	c.Dir, c.Env = dir, s.env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if err != nil {
		s.t.Fatalf("README line %d: %s\n%v\nstdout:\n%s\nstderr:\n%s", l.n, l.text, err, out.String(), errb.String())
	}
	b, err := os.ReadFile(s.envFile)
	if err != nil {
		s.t.Fatalf("README line %d: the environment after it: %v", l.n, err)
	}
	s.env = s.env[:0:0]
	for _, kv := range strings.Split(string(b), "\x00") {
		if kv != "" {
			s.env = append(s.env, kv)
		}
	}
	return out.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runBin runs a program the test itself needs (not a README line).
func runBin(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	c := exec.Command(name, args...)
	c.Dir, c.Env = dir, env
	var errb bytes.Buffer
	c.Stderr = &errb
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return string(out)
}

func labelsAndHashes(t *testing.T, logJSON string) string {
	t.Helper()
	var es []logEntry
	if err := json.Unmarshal([]byte(logJSON), &es); err != nil || len(es) == 0 {
		t.Fatalf("log --format json: %v\n%s", err, logJSON)
	}
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s %s\n", e.Label, e.Hash)
	}
	return b.String()
}

var (
	suggestionRE  = regexp.MustCompile(`\bs[a-z2-7]{16}\b`)
	tokenIDRE     = regexp.MustCompile(`folio_[0-9a-f]{12}`)
	tokenSecretRE = regexp.MustCompile(`folio_[0-9a-f]{12}_[0-9a-z]+`)
)

// readmeDaemon is the README's `folio serve` line running as a child.
type readmeDaemon struct {
	cmd        *exec.Cmd
	url, token string
	out        *lockedBuffer
	done       chan struct{}
	err        error // valid once done is closed
}

func startReadmeDaemon(t *testing.T, sh *readmeShell, l readmeLine, dir string) *readmeDaemon {
	t.Helper()
	sh.count++
	addr := filepath.Join(dir, "folio-data", addrFile)
	os.Remove(addr)
	d := &readmeDaemon{out: &lockedBuffer{}, done: make(chan struct{})}
	d.cmd = exec.Command("bash", "-c", "exec "+l.text)
	d.cmd.Dir = dir
	d.cmd.Env = append(append([]string{}, sh.env...), "FOLIO_LISTEN=127.0.0.1:0")
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			d.cmd.Process.Kill()
			<-d.done
		}
	})
	deadline := time.Now().Add(time.Minute) // a hang guard, not a speed check
	for {
		b, _ := os.ReadFile(addr)
		d.url = strings.TrimSpace(string(b))
		d.token = tokenSecretRE.FindString(d.out.String())
		if d.url != "" && d.token != "" {
			return d
		}
		select {
		case <-d.done:
			t.Fatalf("README line %d: %s exited: %v\n%s", l.n, l.text, d.err, d.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("README line %d: %s: no address and admin token after a minute\n%s", l.n, l.text, d.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *readmeDaemon) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.done:
	case <-time.After(time.Minute):
		t.Fatalf("folio serve did not exit after SIGTERM\n%s", d.out)
	}
	if d.err != nil {
		t.Fatalf("folio serve after SIGTERM: %v\n%s", d.err, d.out)
	}
}

// readmeExpectations is the key output of README lines: each line that
// matches cmd must print something matching want. Every expectation must
// meet its line, so a README edit that drops one shows up here.
type readmeExpectations struct {
	list []readmeExpectation
}

type readmeExpectation struct {
	cmd, want *regexp.Regexp
	met       bool
}

func newReadmeExpectations() *readmeExpectations {
	e := func(cmd, want string) readmeExpectation {
		return readmeExpectation{cmd: regexp.MustCompile(cmd), want: regexp.MustCompile(want)}
	}
	return &readmeExpectations{list: []readmeExpectation{
		e(`^folio doc new .*--id notes`, `\bnotes\b`),
		e(`^folio status notes\b`, `(?s)\bv1\.r0\b.*modified paragraph b2\b`),
		e(`^folio checkpoint notes -m `, `sealed notes as v1\.r1\b`),
		e(`^folio doc save notes --from draft\.md .*--checkpoint`, `\bv2\.r2\b`),
		e(`^folio log notes\b`, `(?s)\bv1\.r1\b.*\bv1\.r0\b`),
		e(`^folio show notes@v1\.r1 --format json`, `^\{"schemaVersion":1,"blocks":\[\{"id":"b1","type":"heading"`),
		// The re-saved file keeps b1-b3; its new paragraph gets a fresh id.
		e(`^folio diff notes v1\.r0 v1\.r1`, `(?s)modified paragraph b2\b.*added paragraph b[0-9a-f]{11}\b`),
		e(`^folio restore notes v1\.r0\s*(#|$)`, `\bv2\.r0\b`),
		e(`^folio restore notes v1\.r1 --block b2\b`, `\bv2\.r1\b`),
		e(`^folio history notes b2\b`, `(?s)\bv2\.r1\b.*\bv1\.r0\b`),
		e(`^folio doc list\b`, `\bnotes\b`),
		e(`^folio user add author-a\b`, tokenSecretRE.String()),
		e(`^folio user list\b`, `\bauthor-a\b`),
		e(`^curl .*/v1/docs`, `"id":\s*"notes"`),
		e(`^folio --data restored log notes\b`, `(?s)\bv2\.r1\b.*\bv1\.r0\b`),
		e(`^folio preset list\b`, `(?m)^six-rules +editing`),
		e(`^folio assist notes .*--wait`, `(?s)suggestion s[a-z2-7]{16} \(pending\).*\[-In-\]\{\+To\+\}`),
		e(`^folio suggestion accept `, `as notes@v2\.r3\b`),
		e(`^folio explain notes\b`, `(?s)accepted suggestion s[a-z2-7]{16}.*provider local.*usage: 1 booked event`),
		e(`^folio session list notes\b`, `(?m)^\* +c[a-z2-7]{16}`),
	}}
}

func (e *readmeExpectations) check(t *testing.T, l readmeLine, out string) {
	t.Helper()
	for i := range e.list {
		x := &e.list[i]
		if x.cmd.MatchString(l.text) {
			x.met = true
			if !x.want.MatchString(out) {
				t.Fatalf("README line %d: %s\nprinted no %s:\n%s", l.n, l.text, x.want, out)
			}
		}
	}
}

// skip marks the expectations of a line that could not run as met.
func (e *readmeExpectations) skip(l readmeLine) {
	for i := range e.list {
		if e.list[i].cmd.MatchString(l.text) {
			e.list[i].met = true
		}
	}
}

func (e *readmeExpectations) all(t *testing.T) {
	t.Helper()
	for _, x := range e.list {
		if !x.met {
			t.Errorf("the README has no line matching %s any more; update TestREADMECommands", x.cmd)
		}
	}
}
