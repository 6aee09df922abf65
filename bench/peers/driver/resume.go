package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// resumeSample is how many conversations parked first, and as many parked
// last, the resume figure answers.
const resumeSample = 50

// resume answers, one after another and alternating, the conversations
// parked first and those parked last (parked is in the order they parked),
// and returns the latencies of each group's answer turn and the parked
// conversations it did not answer. With more parked than a peer keeps in
// memory (a2aflow's --workflow-cache-size), the first are the ones it must
// load again; the last are the ones it still has: the ratio of the two
// p50s is what parking out of memory costs a turn.
func resume(p peer, parked []string) (old, recent latency, rest []string) {
	k := min(resumeSample, len(parked)/4)
	if k == 0 {
		return latency{}, latency{}, parked
	}
	first, last := parked[:k], parked[len(parked)-k:]
	var lo, ln []time.Duration
	turn := func(id string, i int, into *[]time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		city := cities[i%len(cities)]
		start := time.Now()
		answer, err := p.turn(ctx, "booker", id, false, city)
		if err == nil && strings.Contains(answer, "Booked "+city) {
			*into = append(*into, time.Since(start))
		}
	}
	for i := range k {
		turn(first[i], i, &lo)
		turn(last[i], i, &ln)
	}
	return percentiles(lo, k), percentiles(ln, k), append([]string(nil), parked[k:len(parked)-k]...)
}

// percentiles is the latency of lats, of n turns asked.
func percentiles(lats []time.Duration, n int) latency {
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	l := latency{n: len(lats), fails: n - len(lats)}
	if l.fails > 0 {
		l.firstErr = fmt.Sprintf("%d answers were wrong or failed", l.fails)
	}
	if len(lats) > 0 {
		l.p50 = lats[len(lats)/2]
		l.p95 = lats[min(len(lats)-1, len(lats)*95/100)]
	}
	return l
}
