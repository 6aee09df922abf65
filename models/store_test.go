package models

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCreateBookingIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2aflow.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.CreateBooking(&Booking{IdempotencyKey: "task-1", Reference: "AF-1", Destination: "Lisbon", Date: "2026-12-01", Travellers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// A retried activity carries a new reference; the first booking wins.
	again, err := s.CreateBooking(&Booking{IdempotencyKey: "task-1", Reference: "AF-2", Destination: "Lisbon", Date: "2026-12-01", Travellers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again, cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("retried booking differs (-want +got):\n%s", diff)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The booking survives reopening the file.
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.CountBookings()
	if err != nil || n != 1 {
		t.Fatalf("CountBookings() = %d, %v; want 1", n, err)
	}
	if _, err := s.Booking("task-2"); err == nil {
		t.Error("Booking(unknown) returned no error")
	}
}
