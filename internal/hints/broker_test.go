package hints

import (
	"testing"
	"time"
)

func TestBrokerHintsOnlyItsTaskAndCoalesces(t *testing.T) {
	b := New()
	a := b.Subscribe("task-a")
	other := b.Subscribe("task-b")
	defer other.Close()

	b.Notify("task-a", 1)
	b.Notify("task-a", 2) // merged into the pending hint, never blocks
	select {
	case <-a.C:
	case <-time.After(time.Second):
		t.Fatal("no hint for task-a")
	}
	select {
	case <-a.C:
		t.Fatal("two hints pending; want them merged into one")
	default:
	}
	select {
	case <-other.C:
		t.Fatal("task-b got task-a's hint")
	default:
	}

	a.Close()
	a.Close()
	b.Notify("task-a", 3) // no subscriber left: nothing to do, no panic
	if len(b.subs) != 1 {
		t.Errorf("broker keeps %d tasks, want 1 (task-b)", len(b.subs))
	}
}
