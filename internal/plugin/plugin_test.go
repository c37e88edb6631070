package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
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
