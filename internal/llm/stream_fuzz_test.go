package llm

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzOpenAIStream feeds arbitrary bodies to the chunk decoder: it must end
// with io.EOF or a classified *Error, never panic or loop.
func FuzzOpenAIStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\n\n",
		"data: {\"error\":{\"message\":\"x\",\"code\":429}}\n\n",
		"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
		"data: nope\n\n", ": x\n\n", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		ctx, cancel := context.WithCancel(context.Background())
		s := &openaiStream{ctx: ctx, cancel: cancel, body: io.NopCloser(strings.NewReader(body)), dec: NewDecoder(strings.NewReader(body))}
		defer s.Close()
		for i := 0; ; i++ {
			if i > len(body)+2 {
				t.Fatal("stream did not end")
			}
			_, err := s.Next()
			if err == nil {
				continue
			}
			var e *Error
			if !errors.Is(err, io.EOF) && !errors.As(err, &e) {
				t.Fatalf("unclassified error %T %v", err, err)
			}
			return
		}
	})
}
