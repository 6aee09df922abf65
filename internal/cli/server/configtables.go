package server

import (
	"fmt"
	"strings"
)

// parseTables reads an array of tables of the config file, [[name]]: each
// table's keys (a "_" read as "-") go through set, which reports a bad value
// as an error and an unknown key by returning false; finish checks a table
// once all its keys are read; key names the table's identity, which no two
// tables may share (dup says what the second one would be, "two prices").
// Errors name the file, the table and the key.
func parseTables[T any](path, name string, v any, keys []string,
	set func(t *T, key string, v any) (bool, error), finish func(t *T) error, key func(T) string, dup string) ([]T, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("config file %s: key %q: want [[%s]] tables", path, name, name)
	}
	var out []T
	seen := map[string]bool{}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("config file %s: %s[%d]: want a table", path, name, i)
		}
		var t T
		for raw, v := range m {
			k := strings.ReplaceAll(raw, "_", "-")
			known, err := set(&t, k, v)
			if !known {
				return nil, fmt.Errorf("config file %s: %s[%d]: unknown key %q%s", path, name, i, k, didYouMean(k, keys))
			}
			if err != nil {
				return nil, fmt.Errorf("config file %s: %s[%d]: key %q: bad value %s: %v", path, name, i, k, showValue(v), err)
			}
		}
		if err := finish(&t); err != nil {
			return nil, fmt.Errorf("config file %s: %s[%d]: %w", path, name, i, err)
		}
		if id := key(t); seen[id] {
			return nil, fmt.Errorf("config file %s: %s: %s has %s", path, name, strings.ReplaceAll(id, "\x00", " "), dup)
		} else {
			seen[id] = true
		}
		out = append(out, t)
	}
	return out, nil
}

// numberValue reads a TOML number (integer or float).
func numberValue(v any, unit string) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case int64:
		return float64(n), nil
	case int:
		return float64(n), nil
	}
	return 0, fmt.Errorf("want a number (%s)", unit)
}
