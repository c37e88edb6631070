package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/plugin"
)

// fake records its lifecycle and fails at the step it is told to.
type fake struct {
	steps  *[]string
	failAt string
}

func (f *fake) step(name string) error {
	*f.steps = append(*f.steps, name)
	if f.failAt == name {
		return errors.New(name + " failed")
	}
	if f.failAt == name+" panic" {
		panic(name + " bug")
	}
	return nil
}

func (f *fake) Decode(json.RawMessage) error            { return f.step("decode") }
func (f *fake) Init(context.Context, plugin.Host) error { return f.step("init") }
func (f *fake) Validate() error                         { return f.step("validate") }
func (f *fake) Close() error                            { *f.steps = append(*f.steps, "close"); return nil }

func TestLifecycle(t *testing.T) {
	tests := []struct {
		failAt string
		want   []string
		err    string
	}{
		{"", []string{"decode", "init", "validate"}, ""},
		{"decode", []string{"decode"}, `plugin "p": config: decode failed`},
		{"init", []string{"decode", "init", "close"}, `plugin "p": init: init failed`},
		{"validate", []string{"decode", "init", "validate", "close"}, `plugin "p": validate: validate failed`},
		{"decode panic", []string{"decode"}, `plugin "p": config: it crashed: decode bug`},
		{"init panic", []string{"decode", "init", "close"}, `plugin "p": init: it crashed: init bug`},
		{"validate panic", []string{"decode", "init", "validate", "close"}, `plugin "p": validate: it crashed: validate bug`},
	}
	for _, tt := range tests {
		var steps []string
		f := plugin.Factory{Info: plugin.Info{ID: "p"}, New: func() plugin.Plugin { return &fake{steps: &steps, failAt: tt.failAt} }}
		_, err := plugin.Start(context.Background(), f, nil, plugin.Host{})
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("fail at %q: err = %v, want %q", tt.failAt, err, tt.err)
		}
		if diff := cmp.Diff(tt.want, steps); diff != "" {
			t.Errorf("fail at %q: steps (-want +got):\n%s", tt.failAt, diff)
		}
	}
}

func TestRegistry(t *testing.T) {
	mk := func(id string) plugin.Factory { return plugin.Factory{Info: plugin.Info{ID: id}} }
	if _, err := plugin.NewRegistry(mk("a"), mk("a")); err == nil || !strings.Contains(err.Error(), `"a" registered twice`) {
		t.Errorf("duplicate: %v", err)
	}
	r, err := plugin.NewRegistry(mk("b"), mk("a"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, i := range r.List() {
		ids = append(ids, i.ID)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids); diff != "" {
		t.Errorf("List order (-want +got):\n%s", diff)
	}
	if _, err := r.Lookup("zz"); !errors.Is(err, plugin.ErrUnknownPlugin) {
		t.Errorf("Lookup(zz) = %v", err)
	}
}

// erring fails Decode or Validate with the error it holds.
type erring struct {
	atValidate bool
	err        error
}

func (e *erring) Decode(json.RawMessage) error {
	if e.atValidate {
		return nil
	}
	return e.err
}
func (e *erring) Init(context.Context, plugin.Host) error { return nil }
func (e *erring) Validate() error {
	if e.atValidate {
		return e.err
	}
	return nil
}
func (e *erring) Close() error { return nil }

// A plugin's field errors read with their whole config path; any other error keeps its words,
// under the plugin's name and step.
func TestFieldErrorsNameTheWholePath(t *testing.T) {
	tests := []struct {
		name       string
		atValidate bool
		err        error
		want       string
	}{
		{"field", false, plugin.FieldError("a.b", "unknown field"), "plugins.entries.p.config.a.b: unknown field"},
		{"section", false, plugin.FieldError("", "must be an object"), "plugins.entries.p.config: must be an object"},
		{"at validate", true, plugin.FieldError("n", "must be positive"), "plugins.entries.p.config.n: must be positive"},
		{"joined", true, errors.Join(plugin.FieldError("a", "r1"), plugin.FieldError("b", "r2")),
			"plugins.entries.p.config.a: r1\nplugins.entries.p.config.b: r2"},
		{"wrapped", false, fmt.Errorf("while reading: %w", plugin.FieldError("a", "r")), `plugin "p": config: while reading: a: r`},
		{"mixed", true, errors.Join(plugin.FieldError("a", "r"), errors.New("other")), "plugin \"p\": validate: a: r\nother"},
	}
	for _, tt := range tests {
		f := plugin.Factory{Info: plugin.Info{ID: "p"}, New: func() plugin.Plugin { return &erring{tt.atValidate, tt.err} }}
		_, err := plugin.Start(context.Background(), f, nil, plugin.Host{})
		if err == nil {
			t.Fatalf("%s: no error", tt.name)
		}
		if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
