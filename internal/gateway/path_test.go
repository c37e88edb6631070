package gateway

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// FuzzPathAt: the path a type error is named by is found for any JSON text, without a panic,
// and it is the path json's own Field gives once the indices are taken out, up to case: json
// matches keys without regard to case, and the path names a key as the request spelled it.
func FuzzPathAt(f *testing.F) {
	for _, s := range []string{`{"messages":[{"role":"user"},{"tool_calls":[{},{"id":5}]}]}`, `[1,[2,{"a":"x"}]]`,
		`{"messages":{}}`, `{"max_tokens":1e400}`, `{"a":{"b":[[],[{"c":true}]]}}`, `5`, `{"messages":[null,7]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v struct {
			Messages []struct {
				Role      string `json:"role"`
				ToolCalls []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"messages"`
			MaxTokens int `json:"max_tokens"`
		}
		if !json.Valid([]byte(s)) {
			return
		}
		var te *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(s), &v); !errors.As(err, &te) {
			return
		}
		got := pathAt([]byte(s), te.Offset)
		plain := []byte{}
		for i := 0; i < len(got); i++ {
			if got[i] == '[' {
				for i < len(got) && got[i] != ']' {
					i++
				}
				continue
			}
			plain = append(plain, got[i])
		}
		if !strings.EqualFold(string(plain), te.Field) {
			t.Errorf("pathAt(%s, %d) = %q; json's field is %q", s, te.Offset, got, te.Field)
		}
	})
}

// TestPathAtDeepNestingIsLinear: a wrong value after a deeply nested one (a tool's parameters
// may nest as deep as JSON allows) is named at a cost proportional to the body; the path was
// built again at every value, quadratic in the nesting: 5 s for one 20 kB body.
func TestPathAtDeepNestingIsLinear(t *testing.T) {
	const depth = 9990
	nest := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	body := `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a","parameters":` +
		nest + `}}],"model":5}`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := parseChat([]byte(body))
	runtime.ReadMemStats(&after)
	if err == nil || err.Error() != "model: must be a string" {
		t.Fatalf("err = %v", err)
	}
	// Linear naming allocates some hundred times the body; the quadratic one, thousands.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(500*len(body)); got > limit {
		t.Errorf("naming the wrong value of a %d-byte body allocated %d bytes, over %d", len(body), got, limit)
	}
	if got := pathAt([]byte(`[`+nest+`,{"a":[1,{"b":true}]}]`), int64(len(nest)+17)); got != "[1].a[1].b" {
		t.Errorf("path after the nesting = %q", got)
	}
}
