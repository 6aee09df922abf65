package models

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"gorm.io/gorm/schema"
)

// rawJSON stores a json.RawMessage field as text, byte for byte, and reads
// it back from either backend: SQLite hands text or blob columns over as
// []byte, PostgreSQL's driver hands text over as string, which database/sql
// cannot put into a json.RawMessage by itself. NULL is a nil message.
//
// Unlike gorm's json serializer it neither validates nor compacts the JSON.
type rawJSON struct{}

func init() { schema.RegisterSerializer("rawjson", rawJSON{}) }

func (rawJSON) Scan(ctx context.Context, field *schema.Field, dst reflect.Value, dbValue any) error {
	var raw json.RawMessage
	switch v := dbValue.(type) {
	case nil:
	case []byte:
		raw = bytes.Clone(v) // the driver may reuse v
	case string:
		raw = json.RawMessage(v)
	default:
		return fmt.Errorf("column %s: cannot read %T as JSON", field.DBName, dbValue)
	}
	field.ReflectValueOf(ctx, dst).Set(reflect.ValueOf(raw))
	return nil
}

func (rawJSON) Value(_ context.Context, field *schema.Field, _ reflect.Value, fieldValue any) (any, error) {
	if fieldValue == nil {
		return nil, nil
	}
	raw, ok := fieldValue.(json.RawMessage)
	if !ok {
		return nil, fmt.Errorf("column %s: %T is not a json.RawMessage", field.DBName, fieldValue)
	}
	if raw == nil {
		return nil, nil
	}
	return string(raw), nil
}
