package gateway

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/llm"
)

// checkParsed holds for what either API's parser makes of any body: a refusal is a request
// error alone (a 400 naming the field, or none for a body that is not JSON; never a 500), and accepted input has no empty assistant
// message and only the roles a transcript holds.
func checkParsed(t *testing.T, body []byte, req any, tr app.TurnRequest, err error) {
	t.Helper()
	if err != nil {
		var br *badRequest
		if req != nil || !errors.As(err, &br) || br.Field == "" && json.Valid(body) {
			t.Fatalf("%q: %v (%T): an error must come alone, as a request error naming a field (none for a body that is not JSON)", body, err, err)
		}
		return
	}
	for i, m := range tr.Input {
		switch m.Role {
		case llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
		default:
			t.Fatalf("%q: input[%d] has role %q", body, i, m.Role)
		}
		if m.Role == llm.RoleAssistant && len(m.Parts) == 0 {
			t.Fatalf("%q: input[%d] is an empty assistant message", body, i)
		}
	}
}

func FuzzParseChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"x","content":"r"}]}`,
		`{"messages":[],"n":2}`, `{"messages":[{"role":"user","content":1}]}`, `[]`, `{"tools":[{"type":"function","function":{"name":"a b"}}]}`,
		`{"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"function","function":{"name":"f"}},"max_tokens":-1}`,
		`{"messages":[{"role":"user","content":"x"}],"stream":true,"extra_field":{"a":1}}`,
		`{"messages":[{"role":"user","content":[{"type":"text"},{"type":"image_url","image_url":{"url":"data:image/png;base64,!!"}}]}],"max_tokens":1.5}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}},{"id":"a","function":{"name":"f"}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		cr, tr, err := parseChat(body)
		var req any
		if cr != nil {
			req = cr
		}
		checkParsed(t, body, req, tr, err)
	})
}

func FuzzParseResponses(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":"hi"}`,
		`{"input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"https://x/y.png"}]}]}`,
		`{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"r"}]}`,
		`{"input":[{"type":"function_call_output","call_id":"x","output":"r"}]}`,
		`{"input":"x","previous_response_id":"resp_1"}`, `{"input":3}`, `{}`, `null`,
		`{"input":"x","instructions":"be brief","max_output_tokens":-5}`,
		`{"input":"x","tools":[{"type":"web_search"}]}`,
		`{"input":[{"type":"function_call","call_id":"c","name":"f"},{"type":"reasoning"},{"type":"function_call","call_id":"c","name":"g","arguments":"null"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rr, tr, err := parseResponses(body)
		var req any
		if rr != nil {
			req = rr
		}
		checkParsed(t, body, req, tr, err)
	})
}
