package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/llm/localedit"
)

func TestCountTokens(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "a": 1, "abcd": 1, "abcde": 2, "hello world": 4, "  \n\t": 0,
		"世界": 2, "日本語のテキスト": 8, "안녕": 2, "hi世界there": 1 + 2 + 2, "🙂🙂🙂🙂🙂": 2,
	} {
		if got := llm.CountTokens(in); got != want {
			t.Errorf("CountTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

func msgs(s string) []llm.Message {
	return []llm.Message{{Role: llm.System, Content: "sys"}, {Role: llm.User, Content: s}}
}

// collect runs req on the local provider twice (the answer must not vary)
// and checks the documented usage.
func collect(t *testing.T, req llm.Request) llm.Result {
	t.Helper()
	p := llm.NewLocal("")
	res, err := llm.Collect(context.Background(), p, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := llm.CountInput(req.Messages)
	if req.Task != nil {
		in += llm.CountTokens(req.Task.Instruction) + llm.MessageOverhead
		for _, s := range req.Task.Segments {
			in += llm.CountTokens(s)
		}
		if sc := req.Task.Scope; sc != nil {
			// The plain text of the blocks it reads: the text blocks, or
			// a selection's block.
			for _, b := range sc.Blocks {
				if b.Type.IsText() || sc.Kind == llm.EditSelection {
					in += llm.CountTokens(flowdoc.PlainText(b.RichText))
				}
			}
		}
	}
	out := llm.CountTokens(res.Text)
	if !res.UsageKnown || res.Usage != (llm.Usage{Input: in, Output: out, Total: in + out}) {
		t.Fatalf("usage %+v known %v, want input %d output %d", res.Usage, res.UsageKnown, in, out)
	}
	again, _ := llm.Collect(context.Background(), p, req, nil)
	if again.Text != res.Text {
		t.Fatal("not deterministic")
	}
	return res
}

func decode(t *testing.T, s string) localedit.Result {
	t.Helper()
	var r localedit.Result
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("answer is not a result: %v: %s", err, s)
	}
	return r
}

// A text request answers the last user message edited by the six rules;
// nothing is made up when no rule applies.
func TestLocalText(t *testing.T) {
	tests := []struct {
		name, in, want, finish string
		max                    int
	}{
		{"edits", "In order to win, we must utilize the data.", "To win, we must use the data.", "stop", 0},
		{"chinese", "其实这个方案非常非常简单。", "这个方案非常简单。", "stop", 0},
		{"nothing to do", "hello   there", "hello   there", "stop", 0},
		{"empty", " ", " ", "stop", 0},
		{"max tokens", "To win, the team must use the data.", "To win, the", "length", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := collect(t, llm.Request{Messages: msgs(tt.in), MaxTokens: tt.max})
			if res.Text != tt.want || res.FinishReason != tt.finish {
				t.Fatalf("got %q (%s), want %q (%s)", res.Text, res.FinishReason, tt.want, tt.finish)
			}
		})
	}
}

// A JSON request without a Task answers the edit result of the last user
// message, whole (never cut by MaxTokens).
func TestLocalJSON(t *testing.T) {
	res := collect(t, llm.Request{Messages: msgs("Basically, the plan works."), JSON: true, MaxTokens: 1})
	r := decode(t, res.Text)
	if r.Outcome != localedit.Edited || len(r.Segments) != 1 || r.Segments[0] != "The plan works." ||
		len(r.Edits) != 1 || r.Edits[0].Rules[0] != localedit.Filler || res.FinishReason != "stop" {
		t.Fatalf("result %+v", r)
	}
}

func TestLocalTask(t *testing.T) {
	segs := []string{"其实我们需要进行一个全面的优化。", "In order to win, the team made a decision.", "公式\uFFFC其实成立。"}
	tests := []struct {
		name    string
		task    llm.EditTask
		outcome localedit.Outcome
		code    string
		out     []string
	}{
		{"editing preset", llm.EditTask{Segments: segs, Personalization: "editing", Instruction: "按所选编辑预设编辑当前范围，并保留事实、观点和作者声音"},
			localedit.Edited, "", []string{"我们需要全面优化。", "To win, the team decided.", "公式\uFFFC成立。"}},
		{"editing preset, some rules", llm.EditTask{Segments: segs, Personalization: "editing", Rules: []string{"strong-verbs", "keep"}},
			localedit.Edited, "", []string{segs[0], "In order to win, the team decided.", segs[2]}},
		{"free instruction", llm.EditTask{Segments: segs, Instruction: "删掉废话"},
			localedit.Edited, "", []string{"我们需要进行全面的优化。", "To win, the team made a decision.", "公式\uFFFC成立。"}},
		{"writing preset", llm.EditTask{Segments: segs, Personalization: "writing", Instruction: "精简"},
			localedit.NoChange, localedit.CodeCannotHonour, segs},
		{"instruction it cannot do", llm.EditTask{Segments: segs, Instruction: "rewrite in a news style"},
			localedit.NoChange, localedit.CodeCannotHonour, segs},
		{"nothing to change", llm.EditTask{Segments: []string{"今天天气很好。"}, Personalization: "editing"},
			localedit.NoChange, localedit.CodeNothingFound, []string{"今天天气很好。"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := tt.task
			res := collect(t, llm.Request{Messages: msgs("the prompt for remote models"), Task: &task})
			r := decode(t, res.Text)
			if r.Outcome != tt.outcome || r.Code != tt.code || strings.Join(r.Segments, "|") != strings.Join(tt.out, "|") {
				t.Fatalf("result %+v", r)
			}
			if r.Outcome == localedit.NoChange && (!strings.HasPrefix(r.Reason, "no change proposed") || len(r.Edits) != 0) {
				t.Fatalf("no-change result without a reason: %+v", r)
			}
		})
	}
}

func TestLocalRefuses(t *testing.T) {
	p := llm.NewLocal("")
	for name, req := range map[string]llm.Request{
		"unknown rule":  {Task: &llm.EditTask{Segments: []string{"x"}, Rules: []string{"rhyme"}}},
		"invalid utf-8": {Task: &llm.EditTask{Segments: []string{"\xff"}, Personalization: "editing"}},
		"too large":     {Messages: msgs(strings.Repeat("word ", localedit.MaxBytes/5+1))},
	} {
		_, err := p.Stream(context.Background(), req)
		var le *llm.Error
		if llm.CodeOf(err) != llm.CodeBadRequest || !asError(err, &le) || le.Retryable() {
			t.Errorf("%s: err = %v, want a permanent bad_request", name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Stream(ctx, llm.Request{}); llm.CodeOf(err) != llm.CodeStreamCut {
		t.Fatalf("cancelled: %v", err)
	}
}

func asError(err error, target **llm.Error) bool {
	e, ok := err.(*llm.Error)
	*target = e
	return ok
}
