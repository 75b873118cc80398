package localedit

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
)

// goldenCase is one case of testdata/golden.txt or testdata/heldback.txt.
type goldenCase struct {
	name    string
	line    int
	rules   []RuleID
	lang    Lang
	in, out []string
	applied []RuleID // nil: nothing may change
}

func readGolden(t testing.TB, path string) []goldenCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []goldenCase
	var c *goldenCase
	sc := bufio.NewScanner(f)
	n := 0
	unescape := strings.NewReplacer(`\uFFFC`, "\uFFFC")
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if name, ok := strings.CutPrefix(line, "=== "); ok {
			cases = append(cases, goldenCase{name: name, line: n})
			c = &cases[len(cases)-1]
			continue
		}
		key, val, ok := strings.Cut(line, ": ")
		if !ok || c == nil {
			t.Fatalf("%s:%d: want \"key: value\" inside a case, got %q", path, n, line)
		}
		val = unescape.Replace(val)
		switch key {
		case "rules":
			if val != "all" {
				for _, r := range strings.Split(val, ",") {
					c.rules = append(c.rules, RuleID(r))
				}
			}
		case "lang":
			c.lang = Lang(val)
		case "in":
			c.in = append(c.in, val)
		case "out":
			c.out = append(c.out, val)
		case "applied":
			if val != "-" {
				for _, r := range strings.Split(val, ",") {
					c.applied = append(c.applied, RuleID(r))
				}
			}
		default:
			t.Fatalf("%s:%d: unknown key %q", path, n, key)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if len(c.in) == 0 || len(c.in) != len(c.out) {
			t.Fatalf("%s:%d: case %q has %d in and %d out lines", path, c.line, c.name, len(c.in), len(c.out))
		}
	}
	return cases
}

// check runs one case and returns what is wrong ("" when it passes).
func (c goldenCase) check(t testing.TB) string {
	res, err := Edit(Request{Segments: c.in, Lang: c.lang, Rules: c.rules})
	if err != nil {
		return "error: " + err.Error()
	}
	var problems []string
	for i, want := range c.out {
		if want == "=" {
			want = c.in[i]
		}
		if res.Segments[i] != want {
			problems = append(problems, "segment "+itoa(i)+":\n   in: "+c.in[i]+"\n  got: "+res.Segments[i]+"\n want: "+want)
		}
	}
	var applied []RuleID
	for _, e := range res.Edits {
		for _, r := range e.Rules {
			if !slices.Contains(applied, r) {
				applied = append(applied, r)
			}
		}
	}
	slices.Sort(applied)
	if !slices.Equal(applied, c.applied) {
		problems = append(problems, "applied "+joinRules(applied)+", want "+joinRules(c.applied))
	}
	if (len(res.Edits) == 0) != (res.Outcome == NoChange) || (res.Outcome == NoChange && res.Reason == "") {
		problems = append(problems, "outcome "+string(res.Outcome)+" with "+itoa(len(res.Edits))+" edits, reason "+res.Reason)
	}
	return strings.Join(problems, "\n")
}

func joinRules(rs []RuleID) string {
	if len(rs) == 0 {
		return "-"
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ",")
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+i%10))) }

func TestGolden(t *testing.T) {
	cases := readGolden(t, "testdata/golden.txt")
	if len(cases) < 60 {
		t.Fatalf("%d golden cases, want at least 60", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if p := c.check(t); p != "" {
				t.Errorf("golden.txt:%d\n%s", c.line, p)
			}
		})
	}
}
