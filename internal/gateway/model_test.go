package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A request that names no model runs the default one, and every object of the answer names it,
// streamed or not: clients log and price by it.
func TestAnswersNameTheModelRun(t *testing.T) {
	const ran = "openai/gpt-5.2"
	for _, tc := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`},
		{"/v1/chat/completions", `{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`},
		{"/v1/responses", `{"input":"x"}`},
		{"/v1/responses", `{"stream":true,"input":"x"}`},
	} {
		srv := serve(t, &fakeAgent{result: answer("hi"), planned: ran})
		resp, b := post(t, srv.URL+tc.path, tc.body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", tc.path, tc.body, resp.StatusCode, b)
		}
		var objects []string
		if strings.Contains(tc.body, `"stream":true`) {
			objects = sseData(t, b)
		} else {
			objects = []string{string(b)}
		}
		var models []string
		for _, o := range objects {
			if o == "[DONE]" {
				continue
			}
			var v struct {
				Model    *string
				Response *struct{ Model string }
			}
			if err := json.Unmarshal([]byte(o), &v); err != nil {
				t.Fatalf("%q: %v", o, err)
			}
			switch {
			case v.Model != nil:
				models = append(models, *v.Model)
			case v.Response != nil:
				models = append(models, v.Response.Model)
			}
		}
		if len(models) == 0 {
			t.Fatalf("%s %s: no object names a model:\n%s", tc.path, tc.body, b)
		}
		for _, m := range models {
			if diff := cmp.Diff(ran, m); diff != "" {
				t.Errorf("%s %s: model (-want +got):\n%s", tc.path, tc.body, diff)
				break
			}
		}
	}
}

// With include_usage every chunk carries "usage": null but the last, which carries the usage
// and no choices (OpenAI's documented stream); without it no chunk names usage.
func TestStreamUsageFieldAsOpenAI(t *testing.T) {
	for _, include := range []bool{true, false} {
		srv := serve(t, &fakeAgent{result: answer("hi")})
		body := `{"model":"a/b","stream":true,"messages":[{"role":"user","content":"x"}]}`
		if include {
			body = `{"model":"a/b","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
		}
		_, b := post(t, srv.URL+"/v1/chat/completions", body)
		data := sseData(t, b)
		var got []string
		for _, d := range data[:len(data)-1] {
			var c map[string]json.RawMessage
			if err := json.Unmarshal([]byte(d), &c); err != nil {
				t.Fatal(err)
			}
			u, ok := c["usage"]
			switch {
			case !ok:
				got = append(got, "absent")
			case string(u) == "null":
				got = append(got, "null")
			default:
				got = append(got, "usage")
			}
		}
		want := make([]string, len(got))
		for i := range want {
			want[i] = "absent"
			if include {
				want[i] = "null"
			}
		}
		if include && len(want) > 0 {
			want[len(want)-1] = "usage"
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("include_usage %v (-want +got):\n%s", include, diff)
		}
	}
}
