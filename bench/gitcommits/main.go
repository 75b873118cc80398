package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	stream := flag.String("stream", "", "the fast-import stream `folio bench history --git-stream` wrote")
	repo := flag.String("repo", "", "the repository to create (must not exist)")
	flag.Parse()
	if *stream == "" || *repo == "" {
		fmt.Fprintln(os.Stderr, "usage: gitcommits -stream FILE -repo DIR")
		os.Exit(2)
	}
	if err := run(*stream, *repo); err != nil {
		fmt.Fprintln(os.Stderr, "gitcommits:", err)
		os.Exit(1)
	}
}

// commit is one commit of the stream: its message and the files it sets.
type commit struct {
	message string
	files   map[string][]byte
}

// readStream reads the subset of the fast-import format that `folio bench
// history` writes: commit, mark, committer, from, data and
// "M 100644 inline PATH" commands.
func readStream(r io.Reader) ([]commit, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	// data reads the payload of a "data N" line.
	data := func(line string) ([]byte, error) {
		n, err := strconv.Atoi(strings.TrimPrefix(line, "data "))
		if err != nil || !strings.HasPrefix(line, "data ") || n < 0 || n > 1<<30 {
			return nil, fmt.Errorf("bad data command %q", line)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	var out []commit
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF && line == "" {
			return out, nil
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
		case strings.HasPrefix(line, "commit "):
			out = append(out, commit{files: map[string][]byte{}})
		case strings.HasPrefix(line, "mark "), strings.HasPrefix(line, "committer "), strings.HasPrefix(line, "from "):
		case len(out) == 0:
			return nil, fmt.Errorf("%q before any commit", line)
		case strings.HasPrefix(line, "data "): // the commit message
			b, err := data(line)
			if err != nil {
				return nil, err
			}
			out[len(out)-1].message = string(b)
		case strings.HasPrefix(line, "M 100644 inline "):
			next, err := br.ReadString('\n')
			if err != nil {
				return nil, fmt.Errorf("file %q without data: %w", line, err)
			}
			b, err := data(strings.TrimSuffix(next, "\n"))
			if err != nil {
				return nil, err
			}
			out[len(out)-1].files[strings.TrimPrefix(line, "M 100644 inline ")] = b
		default:
			return nil, fmt.Errorf("unexpected fast-import command %q", line)
		}
	}
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return nil
}

func run(stream, repo string) error {
	f, err := os.Open(stream)
	if err != nil {
		return err
	}
	commits, err := readStream(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", stream, err)
	}
	if len(commits) == 0 {
		return fmt.Errorf("%s has no commits", stream)
	}
	if _, err := os.Stat(repo); err == nil {
		return fmt.Errorf("%s exists; give a new directory", repo)
	}
	if err := git(".", "init", "-q", "--initial-branch=main", repo); err != nil {
		return err
	}
	for _, kv := range [][2]string{{"core.fsync", "all"}, {"core.fsyncMethod", "fsync"}, {"gc.auto", "0"}, {"commit.gpgSign", "false"}} {
		if err := git(repo, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	t0 := time.Now()
	for i, c := range commits {
		for path, b := range c.files {
			p := filepath.Join(repo, filepath.FromSlash(path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				return err
			}
		}
		args := []string{"commit", "-q", "-a", "--allow-empty", "-m", c.message}
		if i == 0 {
			if err := git(repo, "add", "-A"); err != nil {
				return err
			}
		}
		if err := git(repo, args...); err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"commits": len(commits), "wallSeconds": time.Since(t0).Seconds()})
}
