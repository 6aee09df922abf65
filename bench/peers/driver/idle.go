package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"
)

// idleRounds is how many no-op round trips the idle check makes, and
// idleStall the p50 above which a peer's transport stalls: a no-op answered
// from memory on loopback takes well under a millisecond, so a p50 of
// several milliseconds is the transport (Nagle's algorithm meeting a
// delayed ACK, a proxy, a DNS lookup), not the framework, and would decide
// the row instead of the work measured.
const (
	idleRounds = 50
	idleStall  = 5 * time.Millisecond
)

// idle measures the peer's no-op round trip over the connection its turns
// use, sequentially on a kept-alive connection as the sequential turns run.
func idle(ctx context.Context, p peer) (p50, p95 time.Duration, err error) {
	lats := make([]time.Duration, 0, idleRounds)
	for range idleRounds {
		start := time.Now()
		if err := p.noop(ctx); err != nil {
			return 0, 0, fmt.Errorf("no-op round trip: %w", err)
		}
		lats = append(lats, time.Since(start))
	}
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	return lats[len(lats)/2], lats[len(lats)*95/100], nil
}

// noopPOST posts body to url and reads the whole answer, whatever its
// status: the POST the turns make, answered without any work.
func noopPOST(ctx context.Context, url, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// noopJSONRPC is a JSON-RPC request for a method no A2A server has: the
// server answers -32601 from its dispatcher.
const noopJSONRPC = `{"jsonrpc":"2.0","id":1,"method":"bench/noop","params":{}}`
