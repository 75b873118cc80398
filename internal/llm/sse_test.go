package llm

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func decodeAll(t testing.TB, in string) ([]Event, error) {
	t.Helper()
	d := NewDecoder(strings.NewReader(in))
	var out []Event
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestDecoder(t *testing.T) {
	ev := func(data string) Event { return Event{Data: data, Retry: -1} }
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{"single", "data: a\n\n", []Event{ev("a")}},
		{"no space after colon", "data:a\n\n", []Event{ev("a")}},
		{"only one space dropped", "data:  a\n\n", []Event{ev(" a")}},
		{"multi-line data", "data: a\ndata: b\ndata\n\n", []Event{ev("a\nb\n")}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []Event{ev("a"), ev("b")}},
		{"lone CR", "data: a\r\rdata: b\r\r", []Event{ev("a"), ev("b")}},
		{"comments are keep-alives", ": ping\n\n:\ndata: a\n: mid\ndata: b\n\n", []Event{ev("a\nb")}},
		{"blank lines without data dispatch nothing", "\n\n\nevent: x\n\ndata: a\n\n", []Event{ev("a")}},
		{"event type and id", "event: delta\nid: 7\nretry: 100\ndata: a\n\ndata: b\n\n",
			[]Event{{Type: "delta", ID: "7", Retry: 100, Data: "a"}, {ID: "7", Retry: -1, Data: "b"}}},
		{"bad retry ignored", "retry: 1x\ndata: a\n\n", []Event{ev("a")}},
		{"unknown field ignored", "foo: bar\ndata: a\n\n", []Event{ev("a")}},
		{"unterminated event discarded", "data: a\n\ndata: b", []Event{ev("a")}},
		{"colon inside value kept", `data: {"a":"b: c"}` + "\n\n", []Event{ev(`{"a":"b: c"}`)}},
		{"DONE is data", "data: [DONE]\n\n", []Event{ev("[DONE]")}},
		{"empty data line dispatches empty data", "data:\n\n", []Event{ev("")}},
		{"BOM-free utf8", "data: 世界 🙂\n\n", []Event{ev("世界 🙂")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeAll(t, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// A CR split across two reads must not make an empty line.
func TestDecoderCRLFAcrossReads(t *testing.T) {
	r := io.MultiReader(strings.NewReader("data: a\r"), strings.NewReader("\n\r"), strings.NewReader("\ndata: b\r\n\r\n"))
	d := NewDecoder(oneByteReader{r})
	var got []string
	for {
		ev, err := d.Next()
		if err != nil {
			break
		}
		got = append(got, ev.Data)
	}
	if !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("got %q", got)
	}
}

type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

func TestDecoderLineTooLong(t *testing.T) {
	_, err := decodeAll(t, "data: "+strings.Repeat("x", MaxLine+10)+"\n\n")
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
}

// FuzzDecoder checks the decoder never panics and that line endings do not
// matter: the same stream with LF, CRLF or CR gives the same events.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data:a\ndata: b\n\n", ": c\n\nid: 1\nevent: e\ndata: x\n\n",
		"data: [DONE]\n\n", "retry: 10\n\n", "data: {\"error\":{\"message\":\"x\"}}\n\n", "data",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if strings.ContainsRune(in, '\r') {
			_, _ = decodeAll(t, in) // must not panic
			return
		}
		lf, err1 := decodeAll(t, in)
		crlf, err2 := decodeAll(t, strings.ReplaceAll(in, "\n", "\r\n"))
		cr, err3 := decodeAll(t, strings.ReplaceAll(in, "\n", "\r"))
		if (err1 == nil) != (err2 == nil) || (err1 == nil) != (err3 == nil) {
			t.Fatalf("errors differ: %v %v %v", err1, err2, err3)
		}
		if !reflect.DeepEqual(lf, crlf) || !reflect.DeepEqual(lf, cr) {
			t.Fatalf("events differ:\nLF   %#v\nCRLF %#v\nCR   %#v", lf, crlf, cr)
		}
		for _, ev := range lf {
			if strings.ContainsAny(ev.Type+ev.ID, "\n\r") {
				t.Fatalf("line break inside a field: %#v", ev)
			}
		}
	})
}
