package lang

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"strings"
)

// Texts is a struct of texts (T) in every shipped language: the typed
// face of a group of the message files, for pages that name their texts
// as fields (StaffOpsTextIn(ctx).JobsTitle) rather than by message id.
// A group lives beside every other text, in the language's message
// files: the staff pages' groups in locales/staff.<code>.json, the
// members' in locales/member.<code>.json, each a JSON object named by the
// group whose keys are T's fields (or, for a map of texts, its keys); the
// parity and placeholder tests check them with the messages.
type Texts[T any] map[string]*T

// LoadTexts reads group into a T per language. The files are embedded, so
// a group that does not fit T (a key with no field, a field without a
// text) is a build error: it panics, and every test run sees it.
func LoadTexts[T any](group string) Texts[T] {
	t, err := loadTexts[T](textGroups, group)
	if err != nil {
		panic("lang: " + err.Error())
	}
	return t
}

// In is the texts in the language of ctx.
func (t Texts[T]) In(ctx context.Context) *T { return t.For(Of(ctx).Code) }

// For is the texts in the language code, English for an unknown one.
func (t Texts[T]) For(code string) *T {
	if v, ok := t[code]; ok {
		return v
	}
	return t[Codes[0]]
}

// loadTexts decodes group of each language over the English one: a text
// a language lacks (a field added in English only, before its
// translation) shows in English rather than as nothing, and maps merge
// key by key. The parity test reports such a gap; this keeps it from
// reaching a page as a blank.
func loadTexts[T any](groups map[string]map[string]json.RawMessage, group string) (Texts[T], error) {
	en, ok := groups[Codes[0]][group]
	if !ok {
		return nil, fmt.Errorf("no text group %q in the English files", group)
	}
	out := make(Texts[T], len(Codes))
	for _, code := range Codes {
		t := new(T)
		for _, raw := range []json.RawMessage{en, groups[code][group]} {
			if raw == nil {
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(t); err != nil {
				return nil, fmt.Errorf("text group %q in %s: %v", group, code, err)
			}
		}
		if empty := emptyFields(reflect.ValueOf(t).Elem()); len(empty) > 0 {
			return nil, fmt.Errorf("text group %q in %s has no text for %s", group, code, strings.Join(empty, ", "))
		}
		out[code] = t
	}
	return out, nil
}

// emptyFields names the text fields of a struct, or the keys of a map of
// texts, that hold no text.
func emptyFields(v reflect.Value) []string {
	var out []string
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			name, f := v.Type().Field(i).Name, v.Field(i)
			if f.Kind() == reflect.String && f.String() == "" {
				out = append(out, name)
			}
			for _, key := range emptyFields(f) {
				out = append(out, name+"."+key)
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if e := v.MapIndex(k); e.Kind() == reflect.String && e.String() == "" {
				out = append(out, k.String())
			}
		}
	}
	return out
}

// textGroups are the text groups of each language's group files
// (locales/<name>.<code>.json), read once.
var textGroups = mustReadGroups(localeFiles)

func mustReadGroups(fsys fs.FS) map[string]map[string]json.RawMessage {
	groups, err := readGroups(fsys)
	if err != nil {
		panic("lang: " + err.Error()) // embedded: a broken file is a build error
	}
	return groups
}

// readGroups reads the group files of fsys by language; a group is in
// one file of a language only.
func readGroups(fsys fs.FS) (map[string]map[string]json.RawMessage, error) {
	out := map[string]map[string]json.RawMessage{}
	for _, code := range Codes {
		out[code] = map[string]json.RawMessage{}
	}
	files, err := fs.Glob(fsys, "locales/*.*.json")
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		code := strings.TrimPrefix(path.Ext(strings.TrimSuffix(file, ".json")), ".")
		if !Supported(code) {
			return nil, fmt.Errorf("%s is in no shipped language", file)
		}
		raw, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		var groups map[string]json.RawMessage
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		for name, g := range groups {
			if _, twice := out[code][name]; twice {
				return nil, fmt.Errorf("text group %q twice in %s", name, code)
			}
			out[code][name] = g
		}
	}
	return out, nil
}
