// Command driver is `make bench-peers`: the same small agent (bench/peers)
// on a2aflow and on the durable agent frameworks users compare it with,
// against one fake OpenAI-compatible model, measured in one run on this
// machine. It prints a markdown table: turn latency p50/p95 sequential and
// with 8 clients (and turns/s, and the CPU time of the peer's processes per
// turn, which a machine shared with other work changes much less than the
// turns/s), memory of the servers' processes per 1,000
// conversations parked mid-question, and how many conversations parked
// mid-question complete after a kill -9 of every process of the peer and a
// restart.
//
//	go run ./bench/peers/driver -bin bin/peers-a2aflow
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	flagBin        = flag.String("bin", "bin/peers-a2aflow", "the a2aflow peer program (bench/peers/a2aflow)")
	flagTemporal   = flag.String("temporal", "", "an a2aflow binary whose `temporal` command is the Temporal dev server of the OpenAI Agents peer (default: -bin's)")
	flagDir        = flag.String("dir", "bench/peers", "the peers' folder (agent files and their .venv-* virtual environments)")
	flagPeers      = flag.String("peers", "a2aflow,openai-agents-temporal,langgraph,google-adk", "the peers to measure")
	flagSeq        = flag.Int("seq", 50, "conversations (two turns each) per variant, one after another")
	flagPar        = flag.Int("par", 200, "conversations per variant with 8 clients")
	flagParked     = flag.Int("parked", 1000, "conversations parked mid-question for the memory figure")
	flagKill       = flag.Int("kill", 100, "of those, how many are answered after the kill -9")
	flagSettle     = flag.Duration("settle", 30*time.Second, "how long a peer is left quiet before its memory is read, before and after parking")
	flagClusterBin = flag.String("cluster-bin", "", "for the a2aflow-cluster peer: a folder with temporal-server and temporal-sql-tool already built (scripts/cluster.sh's CLUSTER_BIN; default: built into the peer's folder)")
	flagOut        = flag.String("out", "", "also write the table to this file")
	flagServe      = flag.String("a2aflow-args", "", "more arguments for the a2aflow peer's serve, space-separated (e.g. --temporal-dynamic-config key=value), to measure a setting on and off")
)

// turn sends one user message of conversation id and returns the agent's answer.
type peer interface {
	name() string
	versions() string
	start(ctx context.Context) error
	kill9()
	stop()
	pids() []int
	turn(ctx context.Context, variant, id string, first bool, text string) (string, error)
	// noop is one round trip that does no work, over the transport the
	// turns use (the idle check).
	noop(ctx context.Context) error
}

type result struct {
	peer, versions              string
	err                         string
	lat                         map[string]latency // variant+mode
	rss0, rss1                  float64            // MB before and after parking
	parked, killAsked, killDone int
	killErr                     string
	restart                     time.Duration
	idle50, idle95              time.Duration // the no-op round trip
	// resumeOld and resumeNew are the answer turns of the conversations
	// parked first (out of a cache smaller than the parked count) and
	// last (still in any cache).
	resumeOld, resumeNew latency
}

type latency struct {
	p50, p95 time.Duration
	perSec   float64
	n, fails int
	firstErr string
	// cpuPerTurn is the CPU time (user and system) of the peer's
	// processes per turn: on a machine shared with other work it varies
	// much less than the turns per second.
	cpuPerTurn time.Duration
}

func main() {
	flag.Parse()
	killOnSignal()
	if *flagTemporal == "" {
		*flagTemporal = *flagBin
	}
	llm := &fakeLLM{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	go func() { _ = http.Serve(ln, llm) }()
	baseURL := "http://" + ln.Addr().String() + "/v1"
	work, err := os.MkdirTemp("", "bench-peers-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(work)

	var results []result
	for _, name := range strings.Split(*flagPeers, ",") {
		p, err := newPeer(strings.TrimSpace(name), filepath.Join(work, name), baseURL)
		if err != nil {
			results = append(results, result{peer: name, err: err.Error()})
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s (%s)\n", p.name(), p.versions())
		results = append(results, measure(p))
		p.stop()
	}
	table := render(results)
	fmt.Print(table)
	if *flagOut != "" {
		if err := os.WriteFile(*flagOut, []byte(table), 0o644); err != nil {
			fatal(err)
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench-peers:", err)
	os.Exit(1)
}

var cities = []string{"Lisbon", "Paris", "Tokyo", "Lima", "Oslo", "Cairo", "Quito", "Seoul"}

// conversation runs both turns of one conversation, recording each turn's latency.
func conversation(ctx context.Context, p peer, variant, id string, rec func(time.Duration)) error {
	city := cities[len(id)%len(cities)]
	for i, step := range []struct{ say, want string }{{"Book a trip", "Where to?"}, {city, "Booked " + city}} {
		start := time.Now()
		answer, err := p.turn(ctx, variant, id, i == 0, step.say)
		if err != nil {
			return err
		}
		if !strings.Contains(answer, step.want) {
			return fmt.Errorf("turn %d answered %q, want %q", i+1, answer, step.want)
		}
		if rec != nil {
			rec(time.Since(start))
		}
	}
	return nil
}

// run runs n conversations with the given number of clients.
func run(p peer, variant, prefix string, n, clients int) latency {
	var (
		mu    sync.Mutex
		lats  []time.Duration
		fails int
		first string
		next  = make(chan int)
		wg    sync.WaitGroup
	)
	start, cpu0 := time.Now(), cpuTime(p.pids())
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				err := conversation(ctx, p, variant, fmt.Sprintf("%s-%s-%d", prefix, variant, i), func(d time.Duration) {
					mu.Lock()
					lats = append(lats, d)
					mu.Unlock()
				})
				cancel()
				if err != nil {
					mu.Lock()
					fails++
					if first == "" {
						first = err.Error()
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	wall := time.Since(start)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	l := latency{n: len(lats), fails: fails, firstErr: first, perSec: float64(len(lats)) / wall.Seconds()}
	if len(lats) > 0 {
		l.cpuPerTurn = (cpuTime(p.pids()) - cpu0) / time.Duration(len(lats))
		l.p50 = lats[len(lats)*50/100]
		l.p95 = lats[min(len(lats)-1, len(lats)*95/100)]
	}
	return l
}

func (l latency) String() string {
	s := fmt.Sprintf("p50 %s p95 %s ms, %.1f turns/s, CPU %s ms a turn (%d turns", ms(l.p50), ms(l.p95), l.perSec, ms(l.cpuPerTurn), l.n)
	if l.fails > 0 {
		s += fmt.Sprintf(", %d failed: %s", l.fails, l.firstErr)
	}
	return s + ")"
}

func measure(p peer) (r result) {
	r = result{peer: p.name(), versions: p.versions(), lat: map[string]latency{}}
	ctx := context.Background()
	if err := p.start(ctx); err != nil {
		r.err = "does not start: " + err.Error()
		return r
	}
	idle50, idle95, err := idle(ctx, p)
	if err != nil {
		r.err = err.Error()
		return r
	}
	r.idle50, r.idle95 = idle50, idle95
	fmt.Fprintf(os.Stderr, "   idle round trip: p50 %s p95 %s ms\n", ms(idle50), ms(idle95))
	if idle50 > idleStall {
		r.err = fmt.Sprintf("its transport stalls: a no-op round trip takes %s ms p50 (over %s ms), so the turns would measure it, not the peer",
			ms(idle50), ms(idleStall))
		return r
	}
	for _, variant := range []string{"booker", "booker-tools"} {
		warm := run(p, variant, "warm", 5, 1)
		if warm.fails > 0 {
			r.lat[variant+"/seq"] = warm
			fmt.Fprintf(os.Stderr, "   %s: warm-up failed: %s\n", variant, warm.firstErr)
			continue
		}
		r.lat[variant+"/seq"] = run(p, variant, "seq", *flagSeq, 1)
		r.lat[variant+"/par"] = run(p, variant, "par", *flagPar, 8)
		fmt.Fprintf(os.Stderr, "   %s: seq %s; 8 clients %s\n", variant, r.lat[variant+"/seq"], r.lat[variant+"/par"])
	}

	// Park conversations mid-question: the first turn only ("Where to?").
	// Memory is read once the peer has been quiet for -settle, before and
	// after: what parked conversations keep resident, not the heap a burst
	// of work left for the runtime to give back.
	time.Sleep(*flagSettle)
	r.rss0 = rss(p.pids())
	kinds0 := rssKinds(p.pids())
	var mu sync.Mutex
	var parked []string
	next := make(chan int)
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id := fmt.Sprintf("parked-%d", i)
				ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
				answer, err := p.turn(ctx, "booker", id, true, "Book a trip")
				cancel()
				if err == nil && strings.Contains(answer, "Where to?") {
					mu.Lock()
					parked = append(parked, id)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < *flagParked; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	r.parked = len(parked)
	time.Sleep(*flagSettle)
	r.rss1 = rss(p.pids())
	fmt.Fprintf(os.Stderr, "   parked %d: RSS %.0f -> %.0f MB (%s)\n", r.parked, r.rss0, r.rss1, kindsGrown(kinds0, rssKinds(p.pids())))

	r.resumeOld, r.resumeNew, parked = resume(p, parked)
	fmt.Fprintf(os.Stderr, "   resume: the first parked p50 %s ms, the last parked p50 %s ms\n", ms(r.resumeOld.p50), ms(r.resumeNew.p50))

	// kill -9 every process of the peer with the conversations parked, start
	// it again on the same data, and answer the first of them.
	sort.Strings(parked)
	ask := parked[:min(len(parked), *flagKill)]
	r.killAsked = len(ask)
	p.kill9()
	begin := time.Now()
	if err := p.start(ctx); err != nil {
		r.killErr = "does not restart: " + err.Error()
		return r
	}
	r.restart = time.Since(begin)
	var done int
	var firstErr string
	next = make(chan int)
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				city := cities[i%len(cities)]
				answer, err := p.turn(ctx, "booker", ask[i], false, city)
				cancel()
				mu.Lock()
				if err == nil && strings.Contains(answer, "Booked "+city) {
					done++
				} else if firstErr == "" {
					if err == nil {
						err = fmt.Errorf("answered %q", answer)
					}
					firstErr = err.Error()
				}
				mu.Unlock()
			}
		}()
	}
	for i := range ask {
		next <- i
	}
	close(next)
	wg.Wait()
	r.killDone = done
	r.killErr = firstErr
	fmt.Fprintf(os.Stderr, "   kill -9: %d of %d complete (restart %v) %s\n", done, len(ask), r.restart, firstErr)
	return r
}

// cpuTime is the CPU time, user and system, the processes have used.
func cpuTime(pids []int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses:
		// utime and stime are the 14th and 15th of the line.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 12 {
			var u, k int64
			fmt.Sscanf(f[11], "%d", &u)
			fmt.Sscanf(f[12], "%d", &k)
			ticks += u + k
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTicks = 100

// rss is the resident memory of the processes in MB.
func rss(pids []int) float64 {
	var kb int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "VmRSS:") {
				var n int64
				fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), "%d", &n)
				kb += n
			}
		}
	}
	return float64(kb) / 1024
}

// rssKinds is the resident memory of the processes by kind, in MB: anonymous
// (heaps, stacks), file-backed (the binaries' pages) and shared memory (such
// as SQLite's -shm files), as /proc/PID/status's RssAnon, RssFile and
// RssShmem give it.
func rssKinds(pids []int) map[string]float64 {
	kinds := map[string]float64{}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			for _, k := range []string{"RssAnon", "RssFile", "RssShmem"} {
				if rest, ok := strings.CutPrefix(line, k+":"); ok {
					var n int64
					fmt.Sscanf(strings.TrimSpace(rest), "%d", &n)
					kinds[k] += float64(n) / 1024
				}
			}
		}
	}
	return kinds
}

// kindsGrown says how each kind of resident memory changed.
func kindsGrown(before, after map[string]float64) string {
	var parts []string
	for _, k := range []string{"RssAnon", "RssFile", "RssShmem"} {
		parts = append(parts, fmt.Sprintf("%s %+.0f MB", k, after[k]-before[k]))
	}
	return strings.Join(parts, ", ")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

func render(results []result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s: %d conversations of two turns one after another and %d with 8 clients per variant; %d parked mid-question (memory read after %s quiet); %d of them answered after a kill -9 and restart.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), machine(), *flagSeq, *flagPar, *flagParked, *flagSettle, *flagKill)
	b.WriteString("| peer | versions | idle round trip p50 / p95 | question: turn p50 / p95, sequential | question: 8 clients p50 / p95, turns/s, CPU | tool: turn p50 / p95, sequential | tool: 8 clients p50 / p95, turns/s, CPU | memory per 1,000 parked | answer to a conversation parked first / last, p50 | kill -9 mid-question |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		if r.err != "" {
			fmt.Fprintf(&b, "| %s | %s | %s | | | | | | | |\n", r.peer, r.versions, r.err)
			continue
		}
		cell := func(key string, par bool) string {
			l, ok := r.lat[key]
			if !ok {
				return "—"
			}
			if l.n == 0 {
				return "failed: " + l.firstErr
			}
			s := ms(l.p50) + " / " + ms(l.p95) + " ms"
			if par {
				s += fmt.Sprintf(", %.0f/s, CPU %s ms a turn", l.perSec, ms(l.cpuPerTurn))
			}
			if l.fails > 0 {
				s += fmt.Sprintf(" (%d failed: %s)", l.fails, l.firstErr)
			}
			return s
		}
		mem := "—"
		if r.parked > 0 {
			mem = fmt.Sprintf("%.0f MB (%.0f → %.0f MB for %d)", (r.rss1-r.rss0)*1000/float64(r.parked), r.rss0, r.rss1, r.parked)
		}
		resumed := "—"
		if r.resumeOld.n > 0 && r.resumeNew.n > 0 {
			resumed = fmt.Sprintf("%s / %s ms (%.2fx)", ms(r.resumeOld.p50), ms(r.resumeNew.p50),
				float64(r.resumeOld.p50)/float64(r.resumeNew.p50))
		}
		kill := fmt.Sprintf("%d of %d complete, %d lost", r.killDone, r.killAsked, r.killAsked-r.killDone)
		if r.restart > 0 {
			kill += fmt.Sprintf(" (restart %.1f s)", r.restart.Seconds())
		}
		if r.killErr != "" && r.killDone < r.killAsked {
			kill += ": " + strings.ReplaceAll(r.killErr, "|", "/")
		}
		fmt.Fprintf(&b, "| %s | %s | %s / %s ms | %s | %s | %s | %s | %s | %s | %s |\n", r.peer, r.versions, ms(r.idle50), ms(r.idle95),
			cell("booker/seq", false), cell("booker/par", true), cell("booker-tools/seq", false), cell("booker-tools/par", true), mem, resumed, kill)
	}
	return b.String()
}

func machine() string {
	n := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n = strings.Count(string(b), "\nprocessor") + 1
	}
	return fmt.Sprintf("%d cores", n)
}

// live are the processes started, killed when the driver is interrupted.
var (
	liveMu sync.Mutex
	live   []*proc
)

func killOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		liveMu.Lock()
		for _, p := range live {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
		os.Exit(1)
	}()
}

// proc is one process of a peer, started again after a kill -9.
type proc struct {
	cmd    *exec.Cmd
	name   string
	log    string
	exited chan struct{}
}

func startProc(dir, logName string, env []string, name string, args ...string) (*proc, error) {
	f, err := os.OpenFile(logName, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, name: name, log: logName, exited: make(chan struct{})}
	liveMu.Lock()
	live = append(live, p)
	liveMu.Unlock()
	go func() { _ = cmd.Wait(); f.Close(); close(p.exited) }()
	return p, nil
}

func (p *proc) kill9() {
	if p != nil && p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

func (p *proc) gone() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *proc) stop() {
	if p != nil && p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			p.kill9()
		}
	}
}

// tail is the end of the process's log, for an error.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	s := strings.TrimSpace(string(b))
	if len(s) > 600 {
		s = s[len(s)-600:]
	}
	return s
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitHTTP waits until url answers, or the process exits, or a minute passes.
func waitHTTP(p *proc, url string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if p.gone() {
			return fmt.Errorf("%s exited: %s", filepath.Base(p.name), p.tail())
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after 2 minutes: %s", filepath.Base(p.name), p.tail())
}

// tailAll is the whole log.
func (p *proc) tailAll() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}
