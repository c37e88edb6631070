package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/llm"
)

// apiErr is OpenAI's error object as the tests read it, with the options the sessions API adds.
type apiErr struct {
	Error struct {
		Message string   `json:"message"`
		Type    string   `json:"type"`
		Param   *string  `json:"param"`
		Code    string   `json:"code"`
		Options []string `json:"options"`
	} `json:"error"`
}

// TestMalformedToolTurnsAreRefused: tool calls without an id or a name, tool results that answer
// no call and tool schemas that are not objects would each be stored in the session and sent to
// the provider, which refuses them on every later turn too: they are refused up front, naming
// the field, and nothing runs.
func TestMalformedToolTurnsAreRefused(t *testing.T) {
	const user = `{"role":"user","content":"hi"}`
	const call = `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	tests := []struct {
		name, path, body, param, msg string
	}{
		{"null tool call", "/v1/chat/completions", `{"messages":[` + user + `,{"role":"assistant","tool_calls":[null]}]}`, "messages[1].tool_calls[0].id", "is required"},
		{"tool call without a name", "/v1/chat/completions", `{"messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"c1","function":{"arguments":"{}"}}]}]}`, "messages[1].tool_calls[0].function.name", "is required"},
		{"result without a call", "/v1/chat/completions", `{"messages":[` + user + `,{"role":"tool","tool_call_id":"nope","content":"x"}]}`, "messages[1].tool_call_id", "answers no tool call"},
		{"result for another call", "/v1/chat/completions", `{"user":"u","messages":[` + user + `,` + call + `,{"role":"tool","tool_call_id":"c2","content":"x"}]}`, "messages[2].tool_call_id", "answers no tool call"},
		{"result for an older call", "/v1/chat/completions", `{"messages":[` + user + `,` + call + `,{"role":"tool","tool_call_id":"c1","content":"x"},{"role":"assistant","content":"done"},{"role":"tool","tool_call_id":"c1","content":"again"}]}`, "messages[4].tool_call_id", "answers no tool call"},
		{"responses: output for an older call", "/v1/responses", `{"input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"x"},{"role":"assistant","content":"done"},{"type":"function_call_output","call_id":"c","output":"y"}]}`, "input[4].call_id", "answers no tool call"},
		{"empty assistant message", "/v1/chat/completions", `{"user":"u","messages":[` + user + `,{"role":"assistant","content":null},` + user + `]}`, "messages[1].content", "content or tool_calls"},
		{"responses: empty assistant message", "/v1/responses", `{"input":[{"role":"user","content":"hi"},{"role":"assistant","content":[]}]}`, "input[1].content", "content or tool_calls"},
		{"schema not an object", "/v1/chat/completions", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f","parameters":5}}]}`, "tools[0].function.parameters", "must be a JSON Schema object"},
		{"schema a string", "/v1/chat/completions", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f","parameters":"{}"}}]}`, "tools[0].function.parameters", "must be a JSON Schema object"},
		{"responses: output without a call", "/v1/responses", `{"input":[{"type":"function_call_output","call_id":"nope","output":"x"}]}`, "input[0].call_id", "answers no tool call"},
		{"responses: call without an id", "/v1/responses", `{"input":[{"role":"user","content":"hi"},{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[1].call_id", "is required"},
		{"responses: call without a name", "/v1/responses", `{"input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"c","arguments":"{}"}]}`, "input[1].name", "is required"},
		{"responses: schema not an object", "/v1/responses", `{"input":"hi","tools":[{"type":"function","name":"f","parameters":[]}]}`, "tools[0].parameters", "must be a JSON Schema object"},
		{"responses: negative max_output_tokens", "/v1/responses", `{"input":"hi","max_output_tokens":-1}`, "max_output_tokens", "must be positive"},
		{"responses: previous_response_id", "/v1/responses", `{"input":"and then?","previous_response_id":"resp_123"}`, "previous_response_id", "is not kept by nodmix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAgent{result: answer("x")}
			srv := serve(t, f)
			resp, b := post(t, srv.URL+tt.path, tt.body)
			var e apiErr
			if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Error.Type != "invalid_request_error" {
				t.Fatalf("status %d body %s, want 400 invalid_request_error", resp.StatusCode, b)
			}
			if e.Error.Param == nil || *e.Error.Param != tt.param || !strings.Contains(e.Error.Message, tt.msg) {
				t.Errorf("error = %s, want param %q and %q", b, tt.param, tt.msg)
			}
			if len(f.turns) != 0 {
				t.Errorf("a refused request ran a turn: %+v", f.turns)
			}
		})
	}
}

// TestToolResultsThatMayAnswerStoredCalls: in a kept session a request may hold only the
// client's results, answering the calls the session's last turn ended with; results after the
// message that made the calls are taken anywhere.
func TestToolResultsThatMayAnswerStoredCalls(t *testing.T) {
	for _, c := range []struct{ path, body, header string }{
		{"/v1/chat/completions", `{"user":"u","messages":[{"role":"tool","tool_call_id":"c1","content":"x"}]}`, ""},
		{"/v1/chat/completions", `{"messages":[{"role":"tool","tool_call_id":"c1","content":"x"}]}`, "s"},
		{"/v1/responses", `{"input":[{"type":"function_call_output","call_id":"c1","output":"x"}]}`, "s"},
		// Parallel calls, answered after the message that made them, with no session.
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"two","tool_calls":[{"id":"a","function":{"name":"f"}},{"id":"b","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"b","content":"x"},{"role":"tool","tool_call_id":"a","content":"y"}]}`, ""},
		{"/v1/responses", `{"input":[{"role":"user","content":"hi"},{"role":"assistant","content":"two"},{"type":"function_call","call_id":"a","name":"f"},{"type":"function_call","call_id":"b","name":"f"},{"type":"function_call_output","call_id":"b","output":"x"},{"type":"function_call_output","call_id":"a","output":"y"}]}`, ""},
		// An assistant item with no text of its own before its calls.
		{"/v1/responses", `{"input":[{"role":"user","content":"hi"},{"role":"assistant","content":[]},{"type":"function_call","call_id":"a","name":"f"},{"type":"function_call_output","call_id":"a","output":"y"}]}`, ""},
	} {
		f := &fakeAgent{result: answer("x")}
		srv := serve(t, f)
		var h []string
		if c.header != "" {
			h = []string{"X-Nodmix-Session", c.header}
		}
		if resp, b := post(t, srv.URL+c.path, c.body, h...); resp.StatusCode != http.StatusOK || len(f.turns) != 1 {
			t.Errorf("%s %s = %d %s, want a turn", c.path, c.body, resp.StatusCode, b)
		}
	}
}

// TestWrongTypesNameTheElement: a value of the wrong type inside an array is named with its
// index, so a client can find it in a long conversation.
func TestWrongTypesNameTheElement(t *testing.T) {
	const user = `{"role":"user","content":"hi"}`
	tests := []struct{ path, body, param, msg string }{
		{"/v1/chat/completions", `{"messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}},{"id":"b","function":{"name":"f","arguments":{"x":1}}}]}]}`,
			"messages[1].tool_calls[1].function.arguments", "must be a string"},
		{"/v1/chat/completions", `{"messages":[` + user + `,5]}`, "messages[1]", "must be an object"},
		{"/v1/chat/completions", `{"messages":[` + user + `,{"role":"tool","tool_call_id":7,"content":"x"}]}`, "messages[1].tool_call_id", "must be a string"},
		{"/v1/chat/completions", `{"messages":[` + user + `,{"role":"assistant","tool_calls":{}}]}`, "messages[1].tool_calls", "must be an array"},
		{"/v1/chat/completions", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":["f"]}}]}`, "tools[1].function.name", "must be a string"},
		{"/v1/responses", `{"input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"c","name":"f","arguments":{"a":1}}]}`, "input[1].arguments", "must be a string"},
		{"/v1/responses", `{"input":[{"role":"user","content":"hi"},5]}`, "input[1]", "must be an object"},
		{"/v1/responses", `{"input":"hi","tools":[{"type":"function","name":5}]}`, "tools[0].name", "must be a string"},
		{"/v1/chat/completions", `{"messages":[` + user + `],"max_tokens":1e400}`, "max_tokens", "must be an integer of at most 9223372036854775807"},
		{"/v1/chat/completions", `{"messages":[` + user + `],"temperature":-1e999}`, "temperature", "must be a number"},
		{"/v1/chat/completions", `[1]`, "(body)", "must be an object"},
	}
	srv := serve(t, &fakeAgent{result: answer("x")})
	for _, tt := range tests {
		resp, b := post(t, srv.URL+tt.path, tt.body)
		var e apiErr
		if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d body %s", tt.body, resp.StatusCode, b)
			continue
		}
		if e.Error.Param == nil || *e.Error.Param != tt.param || !strings.Contains(e.Error.Message, tt.param+": "+tt.msg) {
			t.Errorf("%s: error = %s, want %q: %q", tt.body, b, tt.param, tt.msg)
		}
	}
}

// TestBodyOverTheLimit: a body over the bound is 413 with OpenAI's error object, on every route
// that reads one, and runs nothing.
func TestBodyOverTheLimit(t *testing.T) {
	f := &fakeAgent{result: answer("x")}
	srv := serve(t, f)
	big := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 33<<20) + `"}]}`
	for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
		resp, b := post(t, srv.URL+path, big)
		var e apiErr
		if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge ||
			e.Error.Type != "invalid_request_error" || e.Error.Code != "request_too_large" || !strings.Contains(e.Error.Message, "larger than") {
			t.Errorf("%s: %d %.300s, want 413 request_too_large", path, resp.StatusCode, b)
		}
	}
	if len(f.turns) != 0 {
		t.Errorf("a refused body ran %d turns", len(f.turns))
	}
}

// TestStreamRefusedBeforeItStarts: a streamed request the turn refuses before the model is
// asked (an unknown model, a model reference that is not one) gets the status a plain one gets
// and OpenAI's error object, as OpenAI answers, not a 200 stream holding an error event.
func TestStreamRefusedBeforeItStarts(t *testing.T) {
	srv := sessionsServer(t, "")
	tests := []struct {
		model  string
		status int
		code   string
	}{
		{"nope/x", http.StatusNotFound, "model_not_found"},
		{"no-slash", http.StatusBadRequest, "invalid_model"},
	}
	for _, tt := range tests {
		for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
			body := `{"model":"` + tt.model + `","stream":true,"messages":[{"role":"user","content":"hi"}]}`
			if path == "/v1/responses" {
				body = `{"model":"` + tt.model + `","stream":true,"input":"hi"}`
			}
			resp, b := post(t, srv.URL+path, body, "X-Nodmix-Session", "s")
			var e apiErr
			if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != tt.status || e.Error.Code != tt.code {
				t.Errorf("%s model %q: %d %q %s, want %d %s", path, tt.model, resp.StatusCode, resp.Header.Get("Content-Type"), b, tt.status, tt.code)
			}
		}
	}
	// A model that answers still streams.
	resp, b := post(t, srv.URL+"/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || !strings.Contains(string(b), "[DONE]") {
		t.Errorf("streamed turn = %d %s", resp.StatusCode, b)
	}
}

// TestResponsesInputImage: the Responses API's image part ({"type": "input_image", "image_url":
// "<url>"}) reaches the turn as an image; a refused message item is named by its input index.
func TestResponsesInputImage(t *testing.T) {
	f := &fakeAgent{result: answer("x")}
	srv := serve(t, f)
	resp, b := post(t, srv.URL+"/v1/responses", `{"input":[{"role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"auto"}]}]}`)
	if resp.StatusCode != http.StatusOK || len(f.turns) != 1 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	want := []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "look"}, {Kind: llm.KindImage, ImageURL: "data:image/png;base64,AAAA"}}}}
	if diff := cmp.Diff(want, f.turns[0].Input); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	for _, c := range []struct{ body, param string }{
		{`{"input":[{"role":"user","content":[{"type":"input_image"}]}]}`, "input[0].content[0].image_url"},
		{`{"input":[{"role":"user","content":"hi"},{"role":"robot","content":"x"}]}`, "input[1].role"},
		{`{"input":[{"role":"user","content":[{"type":"input_audio"}]}]}`, "input[0].content[0].type"},
	} {
		resp, b := post(t, srv.URL+"/v1/responses", c.body)
		var e apiErr
		if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Error.Param == nil || *e.Error.Param != c.param ||
			!strings.HasPrefix(e.Error.Message, c.param+": ") {
			t.Errorf("%s = %d %s, want 400 naming %s", c.body, resp.StatusCode, b, c.param)
		}
	}
}

// TestMoreThanOneChoiceIsRefused: a turn has one answer, so `n` other than 1 is refused naming
// it, rather than answered with one choice where the client counts on several.
func TestMoreThanOneChoiceIsRefused(t *testing.T) {
	f := &fakeAgent{result: answer("x")}
	srv := serve(t, f)
	for _, n := range []string{"2", "0", "-1"} {
		resp, b := post(t, srv.URL+"/v1/chat/completions", `{"n":`+n+`,"messages":[{"role":"user","content":"hi"}]}`)
		var e apiErr
		if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Error.Param == nil || *e.Error.Param != "n" {
			t.Errorf("n %s = %d %s, want 400 naming n", n, resp.StatusCode, b)
		}
	}
	for _, n := range []string{"1", "null"} {
		if resp, b := post(t, srv.URL+"/v1/chat/completions", `{"n":`+n+`,"messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != http.StatusOK {
			t.Errorf("n %s = %d %s", n, resp.StatusCode, b)
		}
	}
	if len(f.turns) != 2 {
		t.Errorf("%d turns ran, want 2", len(f.turns))
	}
}
