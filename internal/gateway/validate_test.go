package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/llm"
)

// refusal is what a refused request is answered with, as a test compares it.
type refusal struct {
	Status  int
	Type    string
	Param   string
	Message string
}

func refusalOf(t *testing.T, status int, b []byte) refusal {
	t.Helper()
	var e apiErr
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("status %d body %s: %v", status, b, err)
	}
	r := refusal{Status: status, Type: e.Error.Type, Message: e.Error.Message}
	if e.Error.Param != nil {
		r.Param = *e.Error.Param
	}
	return r
}

// TestBadFieldsAreNamed: a value that breaks a rule is refused naming the field where it is,
// with the rule, not blamed on what holds it, and nothing runs.
func TestBadFieldsAreNamed(t *testing.T) {
	const chat, resp = "/v1/chat/completions", "/v1/responses"
	const user = `{"role":"user","content":"hi"}`
	userParts := func(parts string) string { return `{"messages":[{"role":"user","content":[` + parts + `]}]}` }
	inputParts := func(parts string) string { return `{"input":[{"role":"user","content":[` + parts + `]}]}` }
	calls := func(cs string) string {
		return `{"messages":[` + user + `,{"role":"assistant","tool_calls":[` + cs + `]}]}`
	}
	call := func(id, typ, name, args string) string {
		return fmt.Sprintf(`{"id":%q,"type":%q,"function":{"name":%q,"arguments":%q}}`, id, typ, name, args)
	}
	fnCall := func(id, name, args string) string {
		return fmt.Sprintf(`{"type":"function_call","call_id":%q,"name":%q,"arguments":%q}`, id, name, args)
	}
	tests := []struct{ name, path, body, param, msg string }{
		// 1: a wrong type inside a part names the part's field.
		{"text a number", chat, userParts(`{"type":"text","text":5}`), "messages[0].content[0].text", "must be a string"},
		{"second part's text", chat, userParts(`{"type":"text","text":"a"},{"type":"text","text":["b"]}`), "messages[0].content[1].text", "must be a string"},
		{"image_url a number", chat, userParts(`{"type":"image_url","image_url":5}`), "messages[0].content[0].image_url", `must be an object {"url": "…"}`},
		{"url a number", chat, userParts(`{"type":"image_url","image_url":{"url":5}}`), "messages[0].content[0].image_url.url", "must be a string"},
		{"part not an object", chat, userParts(`"hi"`), "messages[0].content[0]", "must be an object"},
		{"responses: text a number", resp, inputParts(`{"type":"input_text","text":5}`), "input[0].content[0].text", "must be a string"},
		{"responses: image_url a number", resp, inputParts(`{"type":"input_image","image_url":5}`), "input[0].content[0].image_url", "must be a string"},
		{"responses: url a number", resp, inputParts(`{"type":"input_image","image_url":{"url":5}}`), "input[0].content[0].image_url.url", "must be a string"},
		// 2: integer fields say integer, and the range.
		{"max_tokens 1e300", chat, `{"messages":[` + user + `],"max_tokens":1e300}`, "max_tokens", "must be an integer of at most 9223372036854775807"},
		{"max_tokens -1e300", chat, `{"messages":[` + user + `],"max_tokens":-1e300}`, "max_tokens", "must be an integer of at least -9223372036854775808"},
		{"max_completion_tokens 1.5", chat, `{"messages":[` + user + `],"max_completion_tokens":1.5}`, "max_completion_tokens", "must be an integer"},
		{"max_tokens a string", chat, `{"messages":[` + user + `],"max_tokens":"5"}`, "max_tokens", "must be an integer"},
		{"max_tokens 1e3", chat, `{"messages":[` + user + `],"max_tokens":1e3}`, "max_tokens", "must be an integer, written without a fraction or exponent"},
		{"n 1.5", chat, `{"messages":[` + user + `],"n":1.5}`, "n", "must be an integer"},
		{"responses: max_output_tokens 1.5", resp, `{"input":"hi","max_output_tokens":1.5}`, "max_output_tokens", "must be an integer"},
		// 4: a text part without its text.
		{"text part without text", chat, userParts(`{"type":"text"}`), "messages[0].content[0].text", "is required in a part of type text"},
		{"text part, text null", chat, `{"messages":[{"role":"system","content":[{"type":"text","text":null}]},` + user + `]}`, "messages[0].content[0].text", "is required in a part of type text"},
		{"responses: input_text without text", resp, inputParts(`{"type":"input_text"}`), "input[0].content[0].text", "is required in a part of type input_text"},
		// 5: images.
		{"bad base64", chat, userParts(`{"type":"image_url","image_url":{"url":"data:image/png;base64,!!!!"}}`), "messages[0].content[0].image_url.url", "is a base64 data URL whose data is not valid base64"},
		{"base64 of one char too many", chat, userParts(`{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAAA"}}`), "messages[0].content[0].image_url.url", "is a base64 data URL whose data is not valid base64"},
		{"padding inside", chat, userParts(`{"type":"image_url","image_url":{"url":"data:image/png;base64,AA==AAAA"}}`), "messages[0].content[0].image_url.url", "is a base64 data URL whose data is not valid base64"},
		{"empty base64", chat, userParts(`{"type":"image_url","image_url":{"url":"data:image/png;base64,"}}`), "messages[0].content[0].image_url.url", "is a base64 data URL whose data is not valid base64"},
		{"responses: bad base64", resp, inputParts(`{"type":"input_image","image_url":"data:image/jpeg;BASE64,a!b"}`), "input[0].content[0].image_url", "is a base64 data URL whose data is not valid base64"},
		{"image_url a bare string", chat, userParts(`{"type":"image_url","image_url":"https://example.com/x.png"}`), "messages[0].content[0].image_url", `must be an object {"url": "…"}`},
		// 6: tool calls in the history, and tools.
		{"duplicate call id", chat, calls(call("a", "function", "f", "{}") + "," + call("a", "function", "g", "{}")), "messages[1].tool_calls[1].id", "repeats tool_calls[0]"},
		{"call type", chat, calls(call("a", "custom", "f", "{}")), "messages[1].tool_calls[0].type", `must be "function"`},
		{"arguments an array", chat, calls(call("a", "function", "f", "[1]")), "messages[1].tool_calls[0].function.arguments", "must be a string holding a JSON object"},
		{"arguments a JSON string", chat, calls(call("a", "function", "f", `"x"`)), "messages[1].tool_calls[0].function.arguments", "must be a string holding a JSON object"},
		{"arguments two objects", chat, calls(call("a", "function", "f", "{} {}")), "messages[1].tool_calls[0].function.arguments", "must be a string holding a JSON object"},
		{"call name", chat, calls(call("a", "function", "a.b", "{}")), "messages[1].tool_calls[0].function.name", "must match ^[A-Za-z0-9_-]{1,64}$"},
		{"tools repeat a name", chat, `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]}`, "tools[1].function.name", "repeats tools[0]"},
		{"responses: duplicate call id", resp, `{"input":[{"role":"user","content":"hi"},` + fnCall("a", "f", "{}") + `,{"type":"reasoning"},` + fnCall("a", "g", "{}") + `]}`, "input[3].call_id", "repeats input[1]"},
		{"responses: arguments an array", resp, `{"input":[{"role":"user","content":"hi"},` + fnCall("a", "f", "[1]") + `]}`, "input[1].arguments", "must be a string holding a JSON object"},
		{"responses: call name", resp, `{"input":[{"role":"user","content":"hi"},` + fnCall("a", "f g", "{}") + `]}`, "input[1].name", "must match ^[A-Za-z0-9_-]{1,64}$"},
		{"responses: tools repeat a name", resp, `{"input":"hi","tools":[{"type":"function","name":"f"},{"type":"function","name":"g"},{"type":"function","name":"g"}]}`, "tools[2].name", "repeats tools[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAgent{result: answer("x")}
			resp, b := post(t, serve(t, f).URL+tt.path, tt.body)
			want := refusal{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: tt.param, Message: tt.param + ": " + tt.msg}
			if diff := cmp.Diff(want, refusalOf(t, resp.StatusCode, b)); diff != "" {
				t.Errorf("%s: refusal (-want +got):\n%s", tt.body, diff)
			}
			if len(f.turns) != 0 {
				t.Errorf("a refused request ran %d turns", len(f.turns))
			}
		})
	}
}

// TestLegitimateShapesStillPass: what OpenAI's clients send, and what nodmix took before, runs
// with the checks above: a call without arguments (""), a call without a type, the Responses
// API's bare image URL, unpadded base64, an empty text part, an id used again in a later turn.
func TestLegitimateShapesStillPass(t *testing.T) {
	const user = `{"role":"user","content":"hi"}`
	tests := []struct {
		name, path, body string
		want             []llm.Message
	}{
		{"no arguments, no type", "/v1/chat/completions",
			`{"messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":""}}]},{"role":"tool","tool_call_id":"a","content":"r"},{"role":"assistant","content":"ok","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":" {\"x\":1} "}}]},{"role":"tool","tool_call_id":"a","content":"s"}]}`,
			[]llm.Message{textMsg(llm.RoleUser, "hi"),
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "a", Name: "f", Args: json.RawMessage(`{}`)}}},
				{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "a", Text: "r"}}},
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: "ok"}, {Kind: llm.KindToolCall, CallID: "a", Name: "f", Args: json.RawMessage(` {"x":1} `)}}},
				{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "a", Text: "s"}}}}},
		{"images and an empty text", "/v1/chat/completions",
			`{"messages":[{"role":"user","content":[{"type":"text","text":""},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAA","detail":"low"}},{"type":"image_url","image_url":{"url":"https://example.com/x.png"}},{"type":"input_image","image_url":"data:image/gif;base64,R0lGOA=="}]}]}`,
			[]llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText}, {Kind: llm.KindImage, ImageURL: "data:image/png;base64,AAA"},
				{Kind: llm.KindImage, ImageURL: "https://example.com/x.png"}, {Kind: llm.KindImage, ImageURL: "data:image/gif;base64,R0lGOA=="}}}}},
		{"responses: an id again after its output", "/v1/responses",
			`{"input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"a","name":"f","arguments":""},{"type":"function_call_output","call_id":"a","output":"r"},{"type":"function_call","call_id":"a","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"a","output":"s"}]}`,
			[]llm.Message{textMsg(llm.RoleUser, "hi"),
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "a", Name: "f", Args: json.RawMessage(`{}`)}}},
				{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "a", Text: "r"}}},
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "a", Name: "f", Args: json.RawMessage(`{}`)}}},
				{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "a", Text: "s"}}}}},
		{"arguments null, base64 in lines", "/v1/chat/completions",
			`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,R0lG\nOA==\r\n"}}]},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"null"}}]},{"role":"tool","tool_call_id":"a","content":"r"}]}`,
			[]llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindImage, ImageURL: "data:image/png;base64,R0lGOA=="}}},
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "a", Name: "f", Args: json.RawMessage(`{}`)}}},
				{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "a", Text: "r"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAgent{result: answer("x")}
			resp, b := post(t, serve(t, f).URL+tt.path, tt.body)
			if resp.StatusCode != http.StatusOK || len(f.turns) != 1 {
				t.Fatalf("%d %s, want a turn", resp.StatusCode, b)
			}
			if diff := cmp.Diff(tt.want, f.turns[0].Input); diff != "" {
				t.Errorf("input (-want +got):\n%s", diff)
			}
		})
	}
}

func textMsg(role llm.Role, text string) llm.Message {
	return llm.Message{Role: role, Parts: []llm.Part{{Kind: llm.KindText, Text: text}}}
}

// TestStalledBodyIsNamedWithoutAddresses: a body that stops arriving is answered with what
// happened and the server's limit, not net's error text with both ends' socket addresses.
func TestStalledBodyIsNamedWithoutAddresses(t *testing.T) {
	api := gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: &fakeAgent{result: answer("x")}})
	const limit = 200 * time.Millisecond
	served := httptest.NewUnstartedServer(api)
	served.Config.ReadTimeout = limit
	served.Start()
	t.Cleanup(served.Close)
	tests := []struct{ name, addr, msg string }{
		{"ServeListener", serveOn(t, "", api, gateway.Limits{Read: limit}),
			"the request body did not arrive within 200ms, the server's limit for reading a request"},
		// A server of its own, which does not say its limit: the rule without the number.
		{"httptest", served.Listener.Addr().String(), "the request body did not arrive within the server's limit for reading a request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			body := `{"messages":[{"role":"user","content":"hi"}]}`
			// Half of the body, then nothing: the connection stays open.
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", tt.addr, len(body), body[:len(body)/2])
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second)) // a guard against a hang, not a measure
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b strings.Builder
			if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			want := refusal{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: tt.msg}
			if diff := cmp.Diff(want, refusalOf(t, resp.StatusCode, []byte(b.String()))); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
			if strings.Contains(b.String(), "127.0.0.1") || strings.Contains(b.String(), "tcp") {
				t.Errorf("the error names the connection: %s", b.String())
			}
		})
	}
}
