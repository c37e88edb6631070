package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/provider"
)

// fakeAgent records turns and answers with a fixed result, emitting its events first.
type fakeAgent struct {
	mu     sync.Mutex
	turns  []app.TurnRequest
	result *app.TurnResult
	err    error
	events []agent.Event
	// planned is the model the fake's turns run, handed to Planned as the app does.
	planned string
}

func (f *fakeAgent) Turn(_ context.Context, req app.TurnRequest) (*app.TurnResult, error) {
	f.mu.Lock()
	f.turns = append(f.turns, req)
	f.mu.Unlock()
	if req.Planned != nil && f.planned != "" {
		req.Planned(f.planned)
	}
	if req.Levels != nil {
		req.Levels(directive.Resolved{}) // as the app does once the turn is planned
	}
	if req.Observe != nil {
		for _, ev := range f.events {
			req.Observe(ev)
		}
	}
	return f.result, f.err
}

func (f *fakeAgent) Models() []app.ModelRow {
	return []app.ModelRow{{Ref: "openai/gpt-5.2", Provider: "openai"}, {Ref: "scripted/demo", Provider: "scripted"}}
}

func serve(t *testing.T, f *fakeAgent) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: f}))
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func answer(text string) *app.TurnResult {
	return &app.TurnResult{Result: agent.Result{Model: "openai/gpt-5.2", Text: text, Steps: 1, Finish: "stop", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}}}
}

func TestChatParsesTheConversation(t *testing.T) {
	f := &fakeAgent{result: answer("hi")}
	srv := serve(t, f)
	body := `{"model":"openai/gpt-5.2","user":"alice","seed":7,"logit_bias":{"1":2},"max_tokens":50,"temperature":0.2,
	  "messages":[
	    {"role":"system","content":"be brief"},
	    {"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]},
	    {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
	    {"role":"tool","tool_call_id":"c1","content":"sunny"}],
	  "tools":[{"type":"function","function":{"name":"get_weather","description":"weather","parameters":{"type":"object"}}}]}`
	resp, b := post(t, srv.URL+"/v1/chat/completions", body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if got := resp.Header.Get("X-Nodmix-Session"); got != "alice" {
		t.Errorf("session header = %q", got)
	}
	tr := f.turns[0]
	if tr.Session != "alice" || tr.Ephemeral || tr.System != "be brief" || tr.MaxTokens != 50 || *tr.Temperature != 0.2 {
		t.Errorf("turn = %+v", tr)
	}
	want := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "look"}, {Kind: llm.KindImage, ImageURL: "data:image/png;base64,AAAA"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "c1", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "c1", Text: "sunny"}}},
	}
	if diff := cmp.Diff(want, tr.Input); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]json.RawMessage{"seed": json.RawMessage(`7`), "logit_bias": json.RawMessage(`{"1":2}`)}, tr.Extra); diff != "" {
		t.Errorf("extra (-want +got):\n%s", diff)
	}
	if len(tr.ClientTools) != 1 || tr.ClientTools[0].Name != "get_weather" {
		t.Errorf("client tools = %+v", tr.ClientTools)
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	choice := out["choices"].([]any)[0].(map[string]any)
	if choice["message"].(map[string]any)["content"] != "hi" || choice["finish_reason"] != "stop" || out["object"] != "chat.completion" {
		t.Errorf("response = %s", b)
	}
}

func TestChatWithoutSessionIsNotKept(t *testing.T) {
	f := &fakeAgent{result: answer("hi")}
	srv := serve(t, f)
	resp, _ := post(t, srv.URL+"/v1/chat/completions", `{"model":"x/y","messages":[{"role":"user","content":"hi"}]}`)
	if resp.Header.Get("X-Nodmix-Session") != "" || !f.turns[0].Ephemeral {
		t.Errorf("a request without a session must run on a session that is not kept: %+v", f.turns[0])
	}
	post(t, srv.URL+"/v1/chat/completions", `{"model":"x/y","messages":[{"role":"user","content":"hi"}]}`, "X-Nodmix-Session", "k1")
	if f.turns[1].Session != "k1" || f.turns[1].Ephemeral {
		t.Errorf("header session: %+v", f.turns[1])
	}
}

func TestChatRefusesBadBodies(t *testing.T) {
	srv := serve(t, &fakeAgent{result: answer("x")})
	cases := []struct{ body, param, msg string }{
		{`nope`, "", "request body is not valid JSON"},
		{`{"model":"a/b","messages":[{"role":"user","content":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}]}`, "", "request body nests arrays and objects deeper than 10000 levels"},
		{`{"model":"a/b","messages":[{"role":"user","content":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}]}`, "messages[0].content[0]", "messages[0].content[0]: must be an object"},
		{`{"model":"a/b","messages":[]}`, "messages", "messages: must hold at least one message"},
		{`{"model":"a/b","messages":"hi"}`, "messages", "messages: must be an array"},
		{`{"model":"a/b","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role", "messages[0].role: must be one of system, developer, user, assistant, tool"},
		{`{"model":"a/b","messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id", "is required for a tool message"},
		{`{"model":"a/b","messages":[{"role":"user","content":5}]}`, "messages[0].content", "must be a string or an array of content parts"},
		{`{"model":"a/b","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"bad name"}}]}`, "tools[0].function.name", "must match"},
		{`{"model":"a/b","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"function"}}`, "tool_choice", "must be auto, none or required"},
		{`{"model":"a/b","messages":[{"role":"user","content":"x"}],"stream":"yes"}`, "stream", "stream: must be a boolean"},
		{`{"model":"a/b","messages":[{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"f","arguments":"{oops"}}]}]}`, "messages[0].tool_calls[0].function.arguments", "must be a string holding a JSON object"},
	}
	for _, c := range cases {
		resp, b := post(t, srv.URL+"/v1/chat/completions", c.body)
		var e apiErr
		if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" {
			t.Errorf("%s: status %d body %s", c.body, resp.StatusCode, b)
			continue
		}
		if !strings.Contains(e.Error.Message, c.msg) {
			t.Errorf("%s: message %q, want %q", c.body, e.Error.Message, c.msg)
		}
		if c.param != "" && (e.Error.Param == nil || *e.Error.Param != c.param) {
			t.Errorf("%s: param %v, want %q", c.body, e.Error.Param, c.param)
		}
	}
}

// TestClientToolNameRule: a client tool whose name a provider would refuse is refused on both
// routes, naming the element and the name rule exactly as catalog files state it; a name at the
// rule's edge is accepted.
func TestClientToolNameRule(t *testing.T) {
	const user = `{"role":"user","content":"hi"}`
	tests := []struct{ path, body, param string }{
		{"/v1/chat/completions", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"a.b"}}]}`, "tools[1].function.name"},
		{"/v1/chat/completions", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":""}}]}`, "tools[0].function.name"},
		{"/v1/responses", `{"input":"hi","tools":[{"type":"function","name":"` + strings.Repeat("n", 65) + `"}]}`, "tools[0].name"},
		{"/v1/responses", `{"input":"hi","tools":[{"type":"function","name":"caf\u00e9"}]}`, "tools[0].name"},
		{"/v1/chat/completions", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"` + strings.Repeat("n", 64) + `"}}]}`, ""},
		{"/v1/responses", `{"input":"hi","tools":[{"type":"function","name":"A-z_09"}]}`, ""},
	}
	srv := serve(t, &fakeAgent{result: answer("x")})
	for _, tt := range tests {
		resp, b := post(t, srv.URL+tt.path, tt.body)
		if tt.param == "" {
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: status %d body %s, want 200", tt.body, resp.StatusCode, b)
			}
			continue
		}
		var e apiErr
		if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d body %s", tt.body, resp.StatusCode, b)
			continue
		}
		if want := tt.param + ": must match ^[A-Za-z0-9_-]{1,64}$"; e.Error.Param == nil || *e.Error.Param != tt.param || e.Error.Message != want {
			t.Errorf("%s: error = %s, want %q", tt.body, b, want)
		}
	}
}

func TestTurnErrorsMapToStatuses(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("x: %w", app.ErrNoModel), 400, "model_required"},
		{fmt.Errorf("model %q: %w", "gpt", provider.ErrModelRef), 400, "invalid_model"},
		{fmt.Errorf("model: %w %q", provider.ErrUnknownProvider, "zz"), 404, "model_not_found"},
		{fmt.Errorf("provider: %w", provider.ErrNoKey), 503, "provider_not_configured"},
		{fmt.Errorf("s: %w", agent.ErrBusy), 409, "session_busy"},
		{&provider.Error{Provider: "openai", Status: 401, Message: "bad key"}, 502, "provider_error"},
		{&provider.Error{Provider: "openai", Status: 429}, 429, "provider_rate_limited"},
		{&provider.Error{Provider: "mm", Err: &llm.StreamError{Type: "status_code 1002", Message: "rate limit", Status: 429}}, 429, "provider_rate_limited"},
		{&provider.Error{Provider: "mm", Err: &llm.StreamError{Type: "status_code 1004", Message: "login fail", Status: 401}}, 502, "provider_error"},
		{fmt.Errorf("turn: %w", &provider.Error{Provider: "openai", Message: "no answer for 10m0s", Err: provider.ErrIdle}), 504, "provider_timeout"},
	}
	for _, c := range cases {
		srv := serve(t, &fakeAgent{err: c.err})
		resp, b := post(t, srv.URL+"/v1/chat/completions", `{"model":"a/b","messages":[{"role":"user","content":"x"}]}`)
		if resp.StatusCode != c.status || !strings.Contains(string(b), `"code":"`+c.code+`"`) {
			t.Errorf("%v: status %d body %s, want %d %s", c.err, resp.StatusCode, b, c.status, c.code)
		}
	}
}

// sseData reads the data lines of an SSE body.
func sseData(t *testing.T, body []byte) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestChatStream(t *testing.T) {
	call := llm.Part{Kind: llm.KindToolCall, CallID: "t1", Name: "exec", Args: json.RawMessage(`{"command":["ls"]}`)}
	f := &fakeAgent{
		events: []agent.Event{
			{Kind: agent.EventText, Text: "Let me "},
			{Kind: agent.EventToolStart, Call: &call},
			{Kind: agent.EventToolEnd, Call: &call, Result: catalog.TextResult("a b")},
			{Kind: agent.EventText, Text: "see."},
		},
		result: &app.TurnResult{Result: agent.Result{Text: "see.", Finish: "tool_calls", ClientCalls: []llm.Part{{Kind: llm.KindToolCall, CallID: "k", Name: "client_fn", Args: json.RawMessage(`{"a":1}`)}}, Usage: llm.Usage{InputTokens: 5, OutputTokens: 2}}},
	}
	srv := serve(t, f)
	resp, b := post(t, srv.URL+"/v1/chat/completions", `{"model":"a/b","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"client_fn"}}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	data := sseData(t, b)
	if data[len(data)-1] != "[DONE]" {
		t.Fatalf("stream must end with [DONE]: %v", data)
	}
	var content string
	var tools []string
	var finish string
	var calls []string
	var usage bool
	for _, d := range data[:len(data)-1] {
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name, Arguments string
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Tool *struct {
				Phase, Name string
			} `json:"nodmix_tool"`
			Usage *struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
		if c.Tool != nil {
			tools = append(tools, c.Tool.Phase+" "+c.Tool.Name)
		}
		if c.Usage != nil && c.Usage.PromptTokens == 5 {
			usage = true
		}
		for _, ch := range c.Choices {
			content += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				calls = append(calls, fmt.Sprintf("%d %s %s %s", tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments))
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if content != "Let me see." || finish != "tool_calls" || !usage {
		t.Errorf("content %q finish %q usage %v", content, finish, usage)
	}
	if diff := cmp.Diff([]string{"start exec", "end exec"}, tools); diff != "" {
		t.Errorf("tool progress (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`0 k client_fn {"a":1}`}, calls); diff != "" {
		t.Errorf("client calls (-want +got):\n%s", diff)
	}
}

func TestChatStreamError(t *testing.T) {
	srv := serve(t, &fakeAgent{err: &provider.Error{Provider: "openai", Status: 500, Message: "boom"}})
	_, b := post(t, srv.URL+"/v1/chat/completions", `{"model":"a/b","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	data := sseData(t, b)
	last := data[len(data)-1]
	if !strings.Contains(last, `"error"`) || !strings.Contains(last, "boom") || strings.Contains(string(b), "[DONE]") {
		t.Errorf("a failed stream ends with an error event and no [DONE]: %s", b)
	}
}

func TestResponses(t *testing.T) {
	f := &fakeAgent{result: answer("hello")}
	srv := serve(t, f)
	resp, b := post(t, srv.URL+"/v1/responses", `{"model":"a/b","instructions":"be kind","input":[
	  {"role":"user","content":[{"type":"input_text","text":"hi"}]},
	  {"type":"function_call","call_id":"c","name":"f","arguments":"{}"},
	  {"type":"function_call_output","call_id":"c","output":"42"}],"metadata":{"k":"v"}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	tr := f.turns[0]
	if tr.System != "be kind" || len(tr.Input) != 3 || tr.Input[2].Parts[0].Text != "42" || string(tr.Extra["metadata"]) != `{"k":"v"}` {
		t.Errorf("turn = %+v", tr)
	}
	var out struct {
		Object string `json:"object"`
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Type, Text string
			} `json:"content"`
		} `json:"output"`
	}
	_ = json.Unmarshal(b, &out)
	if out.Object != "response" || out.Status != "completed" || out.Output[0].Content[0].Text != "hello" {
		t.Errorf("response = %s", b)
	}
	resp, b = post(t, srv.URL+"/v1/responses", `{"model":"a/b","input":[{"type":"web_search_call"}]}`)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "input[0].type") {
		t.Errorf("unknown item: %d %s", resp.StatusCode, b)
	}
}

func TestResponsesStream(t *testing.T) {
	f := &fakeAgent{events: []agent.Event{{Kind: agent.EventText, Text: "he"}, {Kind: agent.EventText, Text: "llo"}}, result: answer("hello")}
	srv := serve(t, f)
	_, b := post(t, srv.URL+"/v1/responses", `{"model":"a/b","input":"hi","stream":true}`)
	var types []string
	var deltas string
	for i, d := range sseData(t, b) {
		var ev struct {
			Type  string `json:"type"`
			Seq   int    `json:"sequence_number"`
			Delta string `json:"delta"`
		}
		_ = json.Unmarshal([]byte(d), &ev)
		if ev.Seq != i {
			t.Errorf("event %d has sequence_number %d", i, ev.Seq)
		}
		types = append(types, ev.Type)
		deltas += ev.Delta
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
		"response.output_item.done", "response.completed"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if deltas != "hello" {
		t.Errorf("deltas = %q", deltas)
	}
}

func TestModels(t *testing.T) {
	srv := serve(t, &fakeAgent{})
	resp, err := http.Get(srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Object string `json:"object"`
		Data   []struct{ ID, Object string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if out.Object != "list" || len(out.Data) != 2 || out.Data[0].ID != "openai/gpt-5.2" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("models = %+v", out)
	}
}

func TestStreamedDirectiveReply(t *testing.T) {
	f := &fakeAgent{result: &app.TurnResult{Result: agent.Result{Text: "Thinking level set to low.", Finish: "directive"}, Directive: true}}
	srv := serve(t, f)
	_, b := post(t, srv.URL+"/v1/chat/completions", `{"model":"a/b","stream":true,"messages":[{"role":"user","content":"/think low"}]}`)
	if !strings.Contains(string(b), `"content":"Thinking level set to low."`) {
		t.Errorf("chat stream lacks the reply: %s", b)
	}
	_, b = post(t, srv.URL+"/v1/responses", `{"model":"a/b","stream":true,"input":"/think low"}`)
	if !strings.Contains(string(b), `"delta":"Thinking level set to low."`) {
		t.Errorf("responses stream lacks the reply: %s", b)
	}
}

// TestResponsesStreamOutputIndices: every output item of a stream is added at the next
// output_index, events name the item at their index, and response.completed holds the items
// added, in order, also when text streamed before the client calls a last step ended with.
func TestResponsesStreamOutputIndices(t *testing.T) {
	call := llm.Part{Kind: llm.KindToolCall, CallID: "s1", Name: "exec", Args: json.RawMessage(`{}`)}
	client := []llm.Part{{Kind: llm.KindToolCall, CallID: "k", Name: "client_fn", Args: json.RawMessage(`{"a":1}`)}}
	tests := []struct {
		name   string
		events []agent.Event
		result agent.Result
		want   []string // the items added, as type/id
	}{
		{"text", []agent.Event{{Kind: agent.EventText, Text: "hi"}}, agent.Result{Text: "hi", Finish: "stop"}, []string{"message"}},
		{"client calls only", nil, agent.Result{ClientCalls: client, Finish: "tool_calls"}, []string{"function_call"}},
		{"text and client calls", []agent.Event{{Kind: agent.EventText, Text: "ok"}}, agent.Result{Text: "ok", ClientCalls: client, Finish: "tool_calls"},
			[]string{"message", "function_call"}},
		{"text of an earlier step, then client calls", []agent.Event{
			{Kind: agent.EventText, Text: "Checking first."},
			{Kind: agent.EventToolStart, Call: &call},
			{Kind: agent.EventToolEnd, Call: &call, Result: catalog.TextResult("done")},
		}, agent.Result{ClientCalls: client, Finish: "tool_calls"}, []string{"message", "function_call"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, &fakeAgent{events: tt.events, result: &app.TurnResult{Result: tt.result}})
			_, b := post(t, srv.URL+"/v1/responses", `{"model":"a/b","input":"hi","stream":true,"tools":[{"type":"function","name":"client_fn"}]}`)
			type item struct{ Type, ID string }
			var added []item
			var completed []item
			for _, d := range sseData(t, b) {
				var ev struct {
					Type        string `json:"type"`
					OutputIndex *int   `json:"output_index"`
					ItemID      string `json:"item_id"`
					Item        *item  `json:"item"`
					Response    struct {
						Output []item `json:"output"`
					} `json:"response"`
				}
				if err := json.Unmarshal([]byte(d), &ev); err != nil {
					t.Fatalf("event %s: %v", d, err)
				}
				switch {
				case ev.Type == "response.output_item.added":
					if *ev.OutputIndex != len(added) {
						t.Errorf("item %s added at output_index %d, want %d", ev.Item.Type, *ev.OutputIndex, len(added))
					}
					added = append(added, *ev.Item)
				case ev.Type == "response.completed":
					completed = ev.Response.Output
				case ev.OutputIndex != nil:
					i := *ev.OutputIndex
					if i >= len(added) {
						t.Errorf("%s at output_index %d, before any item there", ev.Type, i)
						continue
					}
					id := ev.ItemID
					if ev.Item != nil {
						id = ev.Item.ID
					}
					if id != added[i].ID {
						t.Errorf("%s at output_index %d names item %s, the item there is %s", ev.Type, i, id, added[i].ID)
					}
				}
			}
			var types []string
			for _, it := range added {
				types = append(types, it.Type)
			}
			if diff := cmp.Diff(tt.want, types); diff != "" {
				t.Errorf("items added (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(added, completed); diff != "" {
				t.Errorf("response.completed output against the items added (-added +completed):\n%s", diff)
			}
		})
	}
}

// TestResponsesCutShort: a turn cut short by the token cap or a content filter is a response
// with status incomplete and its reason, and a stream of it ends with response.incomplete, as
// OpenAI's; a whole one is completed with incomplete_details null.
func TestResponsesCutShort(t *testing.T) {
	tests := []struct {
		finish, status, reason string
	}{
		{"stop", "completed", ""},
		{"length", "incomplete", "max_output_tokens"},
		{"content_filter", "incomplete", "content_filter"},
	}
	type response struct {
		Status            string
		IncompleteDetails *struct{ Reason string } `json:"incomplete_details"`
		Output            []struct{ Type, Status string }
	}
	check := func(t *testing.T, what string, r response, status, reason string) {
		t.Helper()
		got := r.Status
		if r.IncompleteDetails != nil {
			got += " " + r.IncompleteDetails.Reason
		}
		if want := strings.TrimSpace(status + " " + reason); got != want {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
		// The message item is as complete as the response it ends.
		if len(r.Output) != 1 || r.Output[0].Type != "message" || r.Output[0].Status != status {
			t.Errorf("%s: output %+v, want one message %s", what, r.Output, status)
		}
	}
	for _, tt := range tests {
		t.Run(tt.finish, func(t *testing.T) {
			res := answer("partial")
			res.Finish = tt.finish
			srv := serve(t, &fakeAgent{events: []agent.Event{{Kind: agent.EventText, Text: "partial"}}, result: res})
			_, b := post(t, srv.URL+"/v1/responses", `{"model":"a/b","input":"hi"}`)
			var plain response
			if err := json.Unmarshal(b, &plain); err != nil {
				t.Fatal(err)
			}
			check(t, "response", plain, tt.status, tt.reason)
			if !strings.Contains(string(b), `"incomplete_details":`) {
				t.Errorf("the response lacks incomplete_details: %s", b)
			}
			_, b = post(t, srv.URL+"/v1/responses", `{"model":"a/b","input":"hi","stream":true}`)
			data := sseData(t, b)
			var last struct {
				Type     string
				Response response
			}
			if err := json.Unmarshal([]byte(data[len(data)-1]), &last); err != nil {
				t.Fatal(err)
			}
			if want := "response." + tt.status; last.Type != want {
				t.Errorf("the stream ends with %s, want %s", last.Type, want)
			}
			check(t, "streamed response", last.Response, tt.status, tt.reason)
		})
	}
}

// TestChatContentOfToolCalls: a completion that only calls tools has content null, as OpenAI's:
// clients take a content that is not null for the answer and skip the calls.
func TestChatContentOfToolCalls(t *testing.T) {
	calls := []llm.Part{{Kind: llm.KindToolCall, CallID: "k", Name: "client_fn", Args: json.RawMessage(`{}`)}}
	tests := []struct {
		name   string
		result agent.Result
		want   string // the message's content, as JSON
	}{
		{"an answer", agent.Result{Text: "hi", Finish: "stop"}, `"hi"`},
		{"an empty answer", agent.Result{Finish: "stop"}, `""`},
		{"text and calls", agent.Result{Text: "let me", ClientCalls: calls, Finish: "tool_calls"}, `"let me"`},
		{"calls only", agent.Result{ClientCalls: calls, Finish: "tool_calls"}, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, &fakeAgent{result: &app.TurnResult{Result: tt.result}})
			_, b := post(t, srv.URL+"/v1/chat/completions", `{"model":"a/b","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"client_fn"}}]}`)
			var out struct {
				Choices []struct {
					Message map[string]json.RawMessage `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(b, &out); err != nil || len(out.Choices) != 1 {
				t.Fatalf("%v: %s", err, b)
			}
			content, ok := out.Choices[0].Message["content"]
			if !ok || string(content) != tt.want {
				t.Errorf("content = %s (present %v), want %s", content, ok, tt.want)
			}
		})
	}
}
