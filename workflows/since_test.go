package workflows

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func TestSinceLength(t *testing.T) {
	r := &run{}
	for _, id := range []string{"a", "q1", "b", "q2", "c", "q3"} {
		r.history.recent = append(r.history.recent, &a2a.Message{ID: id})
	}
	n := func(v int) *int { return &v }
	for _, tt := range []struct {
		id    string
		limit *int
		want  *int
	}{
		{"c", nil, n(2)},
		{"b", n(1000), n(4)},
		{"a", n(3), n(3)},       // within the limit
		{"x", n(1000), n(1000)}, // not among the recent messages: the limit
		{"", n(5), n(5)},
		{"x", nil, nil},
	} {
		got := r.sinceLength(tt.id, tt.limit)
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("sinceLength(%q, %v) = %v, want %v", tt.id, tt.limit, got, tt.want)
		}
	}
}
