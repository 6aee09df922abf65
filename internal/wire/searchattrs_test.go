package wire_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/temporalio/sqlparser"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// parseQueryValue parses `A2AContextId = <literal>` as Temporal's
// visibility store does (sqlparser.Parse of a select around the filter) and
// returns the literal's value, failing when the filter is not that one
// comparison with one string literal.
func parseQueryValue(t *testing.T, literal string) (string, bool) {
	t.Helper()
	stmt, err := sqlparser.Parse("select * from table1 where " + wire.ContextIDKey.GetName() + " = " + literal)
	if err != nil {
		return "", false
	}
	sel, ok := stmt.(*sqlparser.Select)
	if !ok || sel.Where == nil {
		return "", false
	}
	cmp, ok := sel.Where.Expr.(*sqlparser.ComparisonExpr)
	if !ok || cmp.Operator != sqlparser.EqualStr {
		return "", false
	}
	val, ok := cmp.Right.(*sqlparser.SQLVal)
	if !ok || val.Type != sqlparser.StrVal {
		return "", false
	}
	return string(val.Val), true
}

func TestQuoteQueryValue(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", `''`},
		{"plain", "ctx-1", `'ctx-1'`},
		{"single quote", "it's", `'it\'s'`},
		{"double quote", `say "hi"`, `'say \"hi\"'`},
		{"backslash", `C:\tmp\x`, `'C:\\tmp\\x'`},
		{"backslash before quote", `\'`, `'\\\''`},
		{"injection", `x' OR A2AOwner != 'y`, `'x\' OR A2AOwner != \'y'`},
		{"control characters", "a\x00b\bc\nd\re\tf\x1ag", `'a\0b\bc\nd\re\tf\Zg'`},
		{"other control characters as they are", "a\x01b\x7fc", "'a\x01b\x7fc'"},
		{"unicode", "café ☕ 日本 🙂", `'café ☕ 日本 🙂'`},
		{"not UTF-8", "a\xffb\xfe", "'a\xffb\xfe'"},
		{"percent and underscore", "50%_off", `'50%_off'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wire.QuoteQueryValue(tt.in)
			if got != tt.want {
				t.Errorf("QuoteQueryValue(%q) = %q, want %q", tt.in, got, tt.want)
			}
			back, ok := parseQueryValue(t, got)
			if !ok || back != tt.in {
				t.Errorf("%s parses as %q (ok %t), want the one literal %q", got, back, ok, tt.in)
			}
		})
	}
}

// TestQuoteQueryValueEveryByte: every byte, alone and between others,
// reads back as itself.
func TestQuoteQueryValueEveryByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		for _, s := range []string{string([]byte{byte(c)}), "a" + string([]byte{byte(c)}) + "'b\\"} {
			if back, ok := parseQueryValue(t, wire.QuoteQueryValue(s)); !ok || back != s {
				t.Errorf("byte %#x: %q reads back as %q (ok %t)", c, s, back, ok)
			}
		}
	}
}

// TestStrconvQuoteIsNotTheQueryLanguage documents why strconv.Quote may not
// quote query values: its Go escapes read as other text.
func TestStrconvQuoteIsNotTheQueryLanguage(t *testing.T) {
	for _, s := range []string{"a\x01b", "a\xffb", "é\u2028"} {
		back, ok := parseQueryValue(t, strconv.Quote(s))
		if ok && back == s {
			t.Errorf("strconv.Quote(%q) reads back as itself; pick a value it gets wrong", s)
		}
	}
}

func FuzzQuoteQueryValue(f *testing.F) {
	for _, s := range []string{"", "ctx-1", "it's", `\`, `\'`, `"`, "\x00\n\r\t\x1a\b", "é", "\xff", `' OR 1=1 --`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := wire.QuoteQueryValue(s)
		if !strings.HasPrefix(q, "'") || !strings.HasSuffix(q, "'") || len(q) < 2 {
			t.Fatalf("QuoteQueryValue(%q) = %q is not single-quoted", s, q)
		}
		if utf8.ValidString(s) != utf8.ValidString(q) {
			t.Fatalf("QuoteQueryValue(%q) = %q changed the UTF-8 validity", s, q)
		}
		if back, ok := parseQueryValue(t, q); !ok || back != s {
			t.Fatalf("QuoteQueryValue(%q) = %q reads back as %q (ok %t)", s, q, back, ok)
		}
	})
}
