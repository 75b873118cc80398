package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// Every time the CLI prints as JSON is RFC 3339 UTC, whatever record it
// comes from; other numbers, and the order of members, stay as they are.
func TestJSONTimesAreRFC3339(t *testing.T) {
	type run struct {
		ID       string         `json:"id"`
		Created  int64          `json:"created"`
		Finished int64          `json:"finished,omitempty"`
		Seq      uint64         `json:"seq"`
		Usage    map[string]int `json:"usage"`
		Events   []struct {
			Time int64  `json:"time"`
			Text string `json:"text"`
		} `json:"events"`
		Published bool      `json:"published"`
		Updated   time.Time `json:"updated"`
	}
	r := run{ID: "r1", Created: 1796016272775, Updated: time.Date(2026, 11, 30, 6, 24, 32, 625e6, time.FixedZone("x", 3600)), Seq: 1796016272775, Usage: map[string]int{"time": 12}, Published: true}
	r.Events = append(r.Events, struct {
		Time int64  `json:"time"`
		Text string `json:"text"`
	}{1796016272875, "<a&b> \"q\" 中文"})
	var out bytes.Buffer
	if err := printJSON(&out, r); err != nil {
		t.Fatal(err)
	}
	want := `{
  "id": "r1",
  "created": "2026-11-30T05:24:32Z",
  "seq": 1796016272775,
  "usage": {
    "time": 12
  },
  "events": [
    {
      "time": "2026-11-30T05:24:32Z",
      "text": "<a&b> \"q\" 中文"
    }
  ],
  "published": true,
  "updated": "2026-11-30T05:24:32Z"
}
`
	if out.String() != want {
		t.Errorf("printJSON =\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if err := printJSON(&out, []any{}); err != nil || out.String() != "[]\n" {
		t.Errorf("empty array: %q %v", out.String(), err)
	}
}

// unmarshalCLI decodes the CLI's JSON output into a record of the stores,
// whose times are Unix milliseconds: the RFC 3339 times the CLI prints
// are read back as such.
func unmarshalCLI(data []byte, v any) error {
	var x any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return err
	}
	var walk func(x any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, e := range t {
				if s, ok := e.(string); ok && timeKeys[k] {
					if tm, err := time.Parse(time.RFC3339, s); err == nil {
						t[k] = json.Number(strconv.FormatInt(tm.UnixMilli(), 10))
						continue
					}
				}
				t[k] = walk(e)
			}
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
		}
		return x
	}
	b, err := json.Marshal(walk(x))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
