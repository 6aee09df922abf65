package pghints_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/a2aflow/a2aflow/internal/hints"
	"github.com/a2aflow/a2aflow/internal/hints/hintstest"
	"github.com/a2aflow/a2aflow/internal/hints/pghints"
	"github.com/a2aflow/a2aflow/internal/pgtest"
)

func postgres(t *testing.T) string {
	t.Helper()
	srv, err := pgtest.Start()
	var missing *pgtest.MissingError
	switch {
	case errors.As(err, &missing) && os.Getenv("CI") != "true":
		t.Skipf("PostgreSQL tests skipped: %v", err)
	case err != nil:
		t.Fatalf("PostgreSQL server for the test: %v", err)
	}
	t.Cleanup(srv.Stop)
	dsn, err := srv.NewDatabase(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// senderAndListener starts a PostgreSQL database, a broker fed by Listen
// with subscribers of task-a and task-b, and a Sender, each of which hints
// every subscriber once as it starts: the listener as it listens (it may
// have missed hints), the sender as its first send (the hints of a worker
// killed before it sent them are lost). Everything ends with t.
func senderAndListener(t *testing.T) (ctx context.Context, dsn string, s *pghints.Sender, a, other *hints.Subscription) {
	t.Helper()
	dsn = postgres(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b := hints.New()
	a, other = b.Subscribe("task-a"), b.Subscribe("task-b")
	t.Cleanup(a.Close)
	t.Cleanup(other.Close)
	if err := pghints.Listen(ctx, dsn, b, logger); err != nil {
		t.Fatal(err)
	}
	hintstest.Hinted(t, a.C, 10*time.Second)
	hintstest.Hinted(t, other.C, time.Second)
	s, err := pghints.NewSender(dsn, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	hintstest.Hinted(t, a.C, 10*time.Second)
	hintstest.Hinted(t, other.C, time.Second)
	return ctx, dsn, s, a, other
}

// TestSenderToListener: a Sender's hint for a task reaches the
// subscribers of that task, and only those, on a broker fed by Listen; the
// listener's connection killed by the server, it listens again (hinting
// every subscriber once) and hints arrive again.
func TestSenderToListener(t *testing.T) {
	ctx, dsn, s, a, other := senderAndListener(t)
	start := time.Now()
	s.Notify("task-a", 1)
	hintstest.Hinted(t, a.C, 5*time.Second)
	t.Logf("hint delivered in %s", time.Since(start))
	hintstest.NotHinted(t, other.C, 200*time.Millisecond)

	// Kill the listener's connection: it comes back and hints again.
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	tag, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()")
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("terminate the listener: %v, %d rows", err, tag.RowsAffected())
	}
	hintstest.Hinted(t, other.C, 10*time.Second) // listening again
	<-a.C
	s.Notify("task-a", 2)
	hintstest.Hinted(t, a.C, 5*time.Second)
}

// TestListenBadDSN: a DSN that does not parse is an error at once.
func TestListenBadDSN(t *testing.T) {
	if err := pghints.Listen(context.Background(), "postgres://a:b@host:notaport/db", hints.New(), slog.Default()); err == nil {
		t.Fatal("no error")
	}
	if _, err := pghints.NewSender("postgres://a:b@host:notaport/db", slog.Default()); err == nil {
		t.Fatal("no error")
	}
}

// TestSenderLostHints: hints a sender could not deliver (over its queue, or
// while PostgreSQL refused them) become one hint for every task, sent as
// soon as the database answers.
func TestSenderLostHints(t *testing.T) {
	ctx, dsn, s, a, other := senderAndListener(t)

	t.Run("over the queue", func(t *testing.T) {
		// 50,000 hints at once: more than a sender queues between two
		// sends (4,096), wherever its send loop is. Every task is hinted.
		for i := range 50000 {
			s.Notify(fmt.Sprintf("task-%d", i), 1)
		}
		hintstest.Hinted(t, a.C, 10*time.Second)
		hintstest.Hinted(t, other.C, 10*time.Second)
	})

	t.Run("refused by PostgreSQL", func(t *testing.T) {
		// What the last subtest's sends still hint, before this one.
		time.Sleep(time.Second)
		for _, c := range []<-chan struct{}{a.C, other.C} {
			select {
			case <-c:
			default:
			}
		}
		// From another database: the sender's sends fail while its
		// database refuses connections and its connection is killed.
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		db := cfg.Database
		cfg.Database = "postgres"
		admin, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close(ctx)
		exec := func(sql string) {
			t.Helper()
			if _, err := admin.Exec(ctx, sql); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		exec(fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS false", pgx.Identifier{db}.Sanitize()))
		exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + db + "' AND query NOT LIKE 'LISTEN%'")
		s.Notify("task-b", 2)
		time.Sleep(3 * time.Second)
		hintstest.NotHinted(t, other.C, 0)
		exec(fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS true", pgx.Identifier{db}.Sanitize()))
		// Once the database answers again, without another hint: every task.
		hintstest.Hinted(t, a.C, 15*time.Second)
		hintstest.Hinted(t, other.C, time.Second)
	})
}

// TestLive: the deltas of a live answer, one longer than a notification's
// payload among them, reach the listener's broker through LiveChannel in
// order, and join into the answer.
func TestLive(t *testing.T) {
	dsn := postgres(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := hints.New()
	sub := b.Subscribe("task-a")
	defer sub.Close()
	if err := pghints.Listen(ctx, dsn, b, logger); err != nil {
		t.Fatal(err)
	}
	hintstest.Hinted(t, sub.C, 10*time.Second) // listening
	c := b.LiveCursor("task-a")
	c.Take()
	s, err := pghints.NewSender(dsn, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := ""
	delta := hints.Delta{Task: "task-a", Call: "run-1", Attempt: 1}
	for i := range 30 {
		piece := fmt.Sprintf("word %d ", i)
		if i == 15 {
			piece = string(make([]byte, 20<<10)) // longer than a notification's payload
		}
		delta.Text = piece
		s.Live(delta)
		delta.Offset += len(piece)
		want += piece
	}
	delta.Text, delta.Done = "", true
	s.Live(delta)
	got, last := "", false
	deadline := time.Now().Add(10 * time.Second)
	for !last && time.Now().Before(deadline) {
		chunks, changed := c.Take()
		for _, ch := range chunks {
			got += ch.Text
			last = last || ch.Last
		}
		select {
		case <-changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !last || got != want {
		t.Errorf("last %v, got %d bytes of %d", last, len(got), len(want))
	}
}
