package gateway

import (
	"encoding/json"
	"errors"
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
