package llm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/go-playground/validator/v10"
	"github.com/invopop/jsonschema"
)

// schemaReflector inlines every type (no $ref/$defs), which the providers'
// structured-output modes handle best. Objects get additionalProperties
// false, which Anthropic's structured output requires.
var schemaReflector = &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true}

// SchemaFor returns the JSON schema of T as a provider takes it: fields
// are named by their json tags, required unless omitempty, described by
// `jsonschema:"description=..."` tags. Generating it is deterministic, so
// workflow code may call it.
func SchemaFor[T any]() (json.RawMessage, error) {
	return schemaOf(reflect.TypeFor[T]())
}

func schemaOf(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("JSON schema of %s: structured output and tool arguments must be a struct (a JSON object): %w", t, ErrInvalidRequest)
	}
	s := schemaReflector.ReflectFromType(t)
	// $schema and $id say nothing a provider needs, and some reject them.
	s.Version, s.ID = "", ""
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("JSON schema of %s: %w", t, err)
	}
	return raw, nil
}

var validate = validator.New(validator.WithRequiredStructEnabled())

// decodeValid decodes a model's JSON text into v and validates it with v's
// `validate` tags. The error says what is wrong in words a model can act on,
// completing "the answer is ...".
// With strict, a field the schema does not have is an error too.
func decodeValid(text string, v any, strict bool) error {
	text = stripCodeFence(text)
	if text == "" && !strict {
		text = "{}" // a tool without arguments
	}
	dec := json.NewDecoder(strings.NewReader(text))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not a JSON object matching the schema: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("not a single JSON object: text follows it")
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	if err := validate.Struct(rv.Interface()); err != nil {
		return fmt.Errorf("not valid: %w", err)
	}
	return nil
}

var fence = regexp.MustCompile("(?s)^```[a-zA-Z]*\\s*\\n(.*?)\\n?```$")

// stripCodeFence removes a ```json fence that some local models put around
// JSON even in structured-output mode.
func stripCodeFence(s string) string {
	s = strings.TrimSpace(s)
	if m := fence.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return s
}
