package config

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"

	"github.com/nodmix/nodmix/internal/config/json5"
)

// SecretEnv returns, sorted and without repeats, the environment variables the configuration
// reads secrets from: the target of every {"$env": NAME} SecretRef, in typed settings (server
// env and headers, provider keys, the gateway token, tools.exec.env) and in the raw sections that
// plugins and agents decode themselves. Commands nodmix runs for a model do not inherit them.
//
// It walks the whole Config, so a secret setting added later is covered without a change here.
func (c *Config) SecretEnv() []string {
	names := map[string]bool{}
	collectEnv(reflect.ValueOf(c), names)
	return slices.Sorted(maps.Keys(names))
}

var (
	secretType = reflect.TypeFor[Secret]()
	rawType    = reflect.TypeFor[json.RawMessage]()
)

func collectEnv(v reflect.Value, names map[string]bool) {
	switch {
	case v.Type() == secretType:
		// Read through reflection rather than Interface: a Secret may sit in an unexported field.
		if env := v.FieldByName("env").String(); env != "" {
			names[env] = true
		}
		return
	case v.Type() == rawType:
		if n, err := json5.Parse(v.Bytes()); err == nil && v.Len() > 0 {
			collectRawEnv(n, names)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			collectEnv(v.Elem(), names)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			collectEnv(v.Field(i), names)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			collectEnv(v.Index(i), names)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			collectEnv(it.Value(), names)
		}
	}
}

// collectRawEnv finds SecretRefs anywhere in free-form JSON: wherever a {"$env": NAME} object
// appears, something may resolve it.
func collectRawEnv(n *json5.Node, names map[string]bool) {
	switch n.Kind {
	case json5.Object:
		if s, rule := decodeSecret(n); rule == "" && s.env != "" {
			names[s.env] = true
			return
		}
		for _, m := range n.Members {
			collectRawEnv(m.Value, names)
		}
	case json5.Array:
		for _, e := range n.Elems {
			collectRawEnv(e, names)
		}
	}
}

// Environ resolves tools.exec.env to NAME=VALUE pairs, in name order. Errors name the path of
// the setting, never a value.
func (e Exec) Environ(lookupEnv func(string) (string, bool)) ([]string, error) {
	if len(e.Env) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(e.Env))
	for _, name := range slices.Sorted(maps.Keys(e.Env)) {
		v, err := e.Env[name].Resolve(lookupEnv)
		if err != nil {
			return nil, err // names tools.exec.env.<name> already
		}
		out = append(out, name+"="+v)
	}
	return out, nil
}
