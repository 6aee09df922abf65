package hints

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// text joins chunks as an A2A client joins artifact chunks: a chunk that
// restarts replaces what came before.
func text(chunks []LiveChunk, into *string) (last bool) {
	for _, ch := range chunks {
		if ch.Restart {
			*into = ""
		}
		*into += ch.Text
		last = last || ch.Last
	}
	return last
}

// TestLiveAnswers: a stream gets the pieces in order, once each (a delta
// sent twice is taken once); a retried call starts its answer over instead
// of adding a second copy; a stream that joins mid-answer gets the text so
// far, then the rest; one that joins after the answer is done gets nothing
// of it (the task's message brings it).
func TestLiveAnswers(t *testing.T) {
	b := New()
	early := b.LiveCursor("t1")
	if chunks, _ := early.Take(); len(chunks) != 0 {
		t.Fatalf("chunks before any delta: %v", chunks)
	}
	d := Delta{Task: "t1", Call: "run-1", Attempt: 1}
	send := func(text string, done bool) {
		d.Text, d.Done = text, done
		b.Live(d)
		d.Offset += len(text)
	}
	send("Hel", false)
	send("lo, ", false)
	b.Live(Delta{Task: "t1", Call: "run-1", Attempt: 1, Offset: 0, Text: "Hel"}) // sent twice
	var got string
	chunks, changed := early.Take()
	text(chunks, &got)
	if got != "Hello, " || !chunks[0].Restart {
		t.Fatalf("early stream: %q %+v", got, chunks)
	}
	// The attempt fails; the retry writes the answer again.
	d = Delta{Task: "t1", Call: "run-1", Attempt: 2}
	send("Hello, ", false)
	select {
	case <-changed:
	default:
		t.Fatal("a delta did not wake the stream")
	}
	chunks, _ = early.Take()
	text(chunks, &got)
	if got != "Hello, " {
		t.Fatalf("after the retry's first piece: %q (%+v)", got, chunks)
	}
	late := b.LiveCursor("t1")
	var lateGot string
	text(must(late.Take()), &lateGot)
	if lateGot != "Hello, " {
		t.Fatalf("stream joining mid-answer: %q", lateGot)
	}
	send("world", false)
	send("!", true)
	if !text(must(early.Take()), &got) || got != "Hello, world!" {
		t.Fatalf("early stream at the end: %q", got)
	}
	if !text(must(late.Take()), &lateGot) || lateGot != "Hello, world!" {
		t.Fatalf("late stream at the end: %q", lateGot)
	}
	if chunks := must(b.LiveCursor("t1").Take()); len(chunks) != 0 {
		t.Fatalf("a stream joining after the answer got %+v", chunks)
	}
	// An earlier attempt's late delta changes nothing.
	b.Live(Delta{Task: "t1", Call: "run-1", Attempt: 1, Offset: 7, Text: "late"})
	if chunks := must(early.Take()); len(chunks) != 0 {
		t.Fatalf("late delta of attempt 1: %+v", chunks)
	}
}

// TestLiveLocalActivityAgain: a local activity's call executed again on
// another worker (its worker died mid-answer) starts at attempt 1 again,
// with a later Since: the answer starts over, as for a retry, instead of
// the second execution's text joining the first's at its offset; the dead
// worker's late piece changes nothing, and retries of the second
// execution (a higher attempt, the same Since) start over again.
func TestLiveLocalActivityAgain(t *testing.T) {
	b := New()
	c := b.LiveCursor("t")
	first := Delta{Task: "t", Call: "run-local-1", Attempt: 2, Since: 100}
	b.Live(Delta{Task: "t", Call: first.Call, Attempt: 2, Since: 100, Text: "The first answer"})
	var got string
	text(must(c.Take()), &got)
	if got != "The first answer" {
		t.Fatalf("got %q", got)
	}
	b.Live(Delta{Task: "t", Call: first.Call, Attempt: 1, Since: 200, Text: "Another"})
	chunks := must(c.Take())
	text(chunks, &got)
	if got != "Another" || len(chunks) != 1 || !chunks[0].Restart {
		t.Fatalf("the second execution's first piece: %q (%+v), want the answer started over", got, chunks)
	}
	b.Live(Delta{Task: "t", Call: first.Call, Attempt: 2, Since: 100, Offset: 16, Text: " (late)"})
	if chunks := must(c.Take()); len(chunks) != 0 {
		t.Fatalf("the dead worker's late piece: %+v", chunks)
	}
	b.Live(Delta{Task: "t", Call: first.Call, Attempt: 2, Since: 200, Text: "Again."})
	b.Live(Delta{Task: "t", Call: first.Call, Attempt: 2, Since: 200, Offset: 6, Done: true})
	chunks = must(c.Take())
	if !text(chunks, &got) || got != "Again." {
		t.Fatalf("the second execution's retry: %q (%+v)", got, chunks)
	}
}

// TestLiveAnswerGap: a lost delta stops the answer live; streams keep what
// they had and get the answer with the task's message.
func TestLiveAnswerGap(t *testing.T) {
	b := New()
	c := b.LiveCursor("t")
	b.Live(Delta{Task: "t", Call: "c", Attempt: 1, Offset: 0, Text: "ab"})
	var got string
	text(must(c.Take()), &got)
	b.Live(Delta{Task: "t", Call: "c", Attempt: 1, Offset: 4, Text: "ef"}) // "cd" lost
	text(must(c.Take()), &got)
	b.Live(Delta{Task: "t", Call: "c", Attempt: 1, Offset: 6, Text: "g", Done: true})
	text(must(c.Take()), &got)
	if got != "ab" {
		t.Fatalf("got %q, want ab", got)
	}
	if chunks := must(b.LiveCursor("t").Take()); len(chunks) != 0 {
		t.Fatalf("a stream joining a broken answer got %+v", chunks)
	}
}

// TestEncodeLive: batches stay under the size given, a long text is split
// at character boundaries, and the pieces join up again.
func TestEncodeLive(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes
	msgs := EncodeLive([]Delta{{Task: "t", Call: "c", Attempt: 1, Text: "hi"}, {Task: "t", Call: "c", Attempt: 1, Offset: 2, Text: long, Done: true}}, 1000)
	b := New()
	cur := b.LiveCursor("t")
	cur.Take()
	for _, m := range msgs {
		if len(m) > 1000 {
			t.Fatalf("message of %d bytes", len(m))
		}
		var batch LiveBatch
		if err := json.Unmarshal(m, &batch); err != nil {
			t.Fatal(err)
		}
		for _, d := range batch.Live {
			b.Live(d)
		}
	}
	var got string
	if !text(must(cur.Take()), &got) {
		t.Error("the answer did not end")
	}
	if diff := cmp.Diff("hi"+long, got); diff != "" {
		t.Errorf("joined text (-want +got):\n%s", diff)
	}
}

func must(chunks []LiveChunk, _ <-chan struct{}) []LiveChunk { return chunks }

// TestLiveFinish: when the task's message lands before an answer's last
// pieces, the answer is completed from it; another open answer just ends.
func TestLiveFinish(t *testing.T) {
	b := New()
	c := b.LiveCursor("t")
	b.Live(Delta{Task: "t", Call: "a", Attempt: 1, Text: "Thinking"})
	b.Live(Delta{Task: "t", Call: "b", Attempt: 1, Text: "The answer "})
	var got string
	text(must(c.Take()), &got)
	chunks := c.Finish("The answer is 42.")
	want := []LiveChunk{{Call: "b", Attempt: 1, Text: "is 42.", Last: true}, {Call: "a", Attempt: 1, Last: true}}
	if diff := cmp.Diff(want, chunks); diff != "" {
		t.Errorf("finish (-want +got):\n%s", diff)
	}
	// The late pieces change nothing for this stream.
	b.Live(Delta{Task: "t", Call: "b", Attempt: 1, Offset: 11, Text: "is 42.", Done: true})
	if chunks := must(c.Take()); len(chunks) != 0 {
		t.Errorf("after finish: %+v", chunks)
	}
}

// TestLiveStatusMessages: a progress message (Delta.Status) reaches a
// stream whole and once, as a status chunk, even when it came in pieces
// (EncodeLive splits a long one); a stream never joins it to the task's
// message (Finish leaves it alone), and an answer beside it is unchanged.
func TestLiveStatusMessages(t *testing.T) {
	b := New()
	c := b.LiveCursor("t1")
	c.Take()
	msg := "Reading the invoices, 3 of 7 done"
	b.Live(Delta{Task: "t1", Call: "run-1-m1", Attempt: 1, Text: msg[:10], Status: true})
	if chunks, _ := c.Take(); len(chunks) != 0 {
		t.Fatalf("a progress message shown before it is whole: %+v", chunks)
	}
	b.Live(Delta{Task: "t1", Call: "run-1-m1", Attempt: 1, Offset: 10, Text: msg[10:], Done: true, Status: true})
	b.Live(Delta{Task: "t1", Call: "run-2", Attempt: 1, Text: "The answer"})
	chunks, _ := c.Take()
	want := []LiveChunk{
		{Call: "run-1-m1", Attempt: 1, Text: msg, Restart: true, Last: true, Status: true},
		{Call: "run-2", Attempt: 1, Text: "The answer", Restart: true},
	}
	if diff := cmp.Diff(want, chunks); diff != "" {
		t.Fatalf("chunks (-want +got):\n%s", diff)
	}
	b.Live(Delta{Task: "t1", Call: "run-1-m1", Attempt: 1, Text: msg, Done: true, Status: true}) // sent twice
	if chunks, _ := c.Take(); len(chunks) != 0 {
		t.Fatalf("a progress message shown twice: %+v", chunks)
	}
	got := c.Finish("The answer is 42")
	if len(got) != 1 || got[0].Call != "run-2" || got[0].Text != " is 42" {
		t.Fatalf("Finish: %+v", got)
	}
	// A stream that joins now shows the latest progress message only.
	b.Live(Delta{Task: "t1", Call: "run-1-m2", Attempt: 1, Text: "Writing", Done: true, Status: true})
	if chunks, _ := b.LiveCursor("t1").Take(); len(chunks) != 2 || chunks[0].Text != "The answer" || chunks[1].Text != "Writing" || !chunks[1].Status {
		t.Fatalf("a joining stream's chunks: %+v", chunks)
	}
	// Carried between processes, the flag stays.
	var batch LiveBatch
	raws := EncodeLive([]Delta{{Task: "t1", Call: "c", Attempt: 1, Text: msg, Done: true, Status: true}}, 1<<10)
	if len(raws) != 1 || json.Unmarshal(raws[0], &batch) != nil || len(batch.Live) != 1 || !batch.Live[0].Status {
		t.Fatalf("encoded: %s", raws)
	}
}

// TestLiveArtifacts: an artifact relayed (Delta.Artifact) shows whole
// parts only (lines), each once though sent again; a stream that joins
// after it is done gets it whole (no message brings it); a higher
// generation starts it over; a piece sent again that differs from what
// came (a version this process missed) stops it live; and once its
// durable copy landed (Landed) no late chunk follows.
func TestLiveArtifacts(t *testing.T) {
	b := New()
	art := &LiveArtifact{ID: "t1-remote-x", Name: "report"}
	d := func(gen int32, off int, text string, done bool) Delta {
		return Delta{Task: "t1", Call: "artifact-" + art.ID, Attempt: gen, Offset: off, Text: text, Done: done, Artifact: art}
	}
	lc := b.LiveCursor("t1")
	lc.Take()
	b.Live(d(1, 0, "{\"text\":\"a\"}\n{\"te", false))
	chunks, _ := lc.Take()
	if len(chunks) != 1 || chunks[0].Text != "{\"text\":\"a\"}\n" || !chunks[0].Restart || chunks[0].Artifact != art {
		t.Fatalf("chunks %+v, want the whole first part, starting the artifact", chunks)
	}
	b.Live(d(1, 0, "{\"text\":\"a\"}\n{\"text\":\"b\"}\n", true)) // sent again, whole
	chunks, _ = lc.Take()
	if len(chunks) != 1 || chunks[0].Text != "{\"text\":\"b\"}\n" || chunks[0].Restart || !chunks[0].Last {
		t.Fatalf("chunks %+v, want the second part once, appended, last", chunks)
	}
	late := b.LiveCursor("t1")
	chunks, _ = late.Take()
	if len(chunks) != 1 || chunks[0].Text != "{\"text\":\"a\"}\n{\"text\":\"b\"}\n" || !chunks[0].Restart || !chunks[0].Last {
		t.Fatalf("a stream joining after: %+v, want the artifact whole", chunks)
	}
	b.Live(d(2, 0, "{\"text\":\"c\"}\n", true))
	chunks, _ = lc.Take()
	if len(chunks) != 1 || chunks[0].Text != "{\"text\":\"c\"}\n" || !chunks[0].Restart || chunks[0].Attempt != 2 {
		t.Fatalf("chunks %+v, want generation 2 started over", chunks)
	}
	b.Live(d(2, 0, "{\"text\":\"X\"}\n{\"text\":\"d\"}\n", false))
	if chunks, _ = lc.Take(); len(chunks) != 0 {
		t.Fatalf("chunks %+v after a piece that differs, want none", chunks)
	}

	other := &LiveArtifact{ID: "t1-remote-y"}
	b.Live(Delta{Task: "t1", Call: "artifact-" + other.ID, Attempt: 1, Text: "{\"text\":\"e\"}\n", Artifact: other})
	lc.Take()
	lc.Landed(other.ID)
	b.Live(Delta{Task: "t1", Call: "artifact-" + other.ID, Attempt: 1, Offset: 13, Text: "{\"text\":\"f\"}\n", Done: true, Artifact: other})
	if chunks, _ = lc.Take(); len(chunks) != 0 {
		t.Fatalf("chunks %+v after the durable copy landed, want none", chunks)
	}
}
