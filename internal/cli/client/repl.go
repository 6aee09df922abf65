package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/models"
)

const replHelp = `Commands:
  :help              this help
  :card              the connected agent's card
  :servers           the known agents: the local one and the agent directory
  :connect URL|N     talk to the agent at URL, or number N of :servers
  :disconnect        back to the local agent
  :remote MESSAGE    send MESSAGE to the connected agent, staying with the local one;
                     :remote :tool NAME [JSON] runs a tool of the connected a2aflow's router
  :listen PORT       serve the local agents on http://127.0.0.1:PORT: runs "a2aflow serve"
                     (data and serve.log in <data-dir>/listen-PORT, the agent directory shared
                     with the REPL) and makes it the local agent
  :stop              stop serving; the local agent is --agent again
  :tool NAME [JSON]  run the local tool NAME (echo, clock, calculator, list_agents...) with
                     the JSON object JSON as its parameters ({} when left out), through the
                     local server's router agent
  :quit              leave (stops serving too; so do end of input and Ctrl-C)
Plain-text commands work too: "connect URL|N", "disconnect", "list servers"
(or "servers"), "card", "help", "quit". Any other line is a message to the
current agent; when a task waits for input, the prompt says so and the next
line answers it. :connect to an agent not yet known adds it to the agent
directory (as "agents add" does), so :servers lists it next time.
`

// errQuit ends the REPL loop.
var errQuit = errors.New("quit")

// replSender is what the REPL needs from an A2A client; tests fake it.
type replSender interface {
	Card(ctx context.Context, url string) (*a2a.AgentCard, error)
	Send(ctx context.Context, url string, msg *a2a.Message) (a2a.SendMessageResult, error)
}

// replServer is one entry of :servers.
type replServer struct{ name, url string }

// replSession keeps the REPL's state: the agents and the current task per agent.
type replSession struct {
	sender    replSender
	local     string // the local agent: the listener's URL while :listen runs, else agent
	agent     string // the --agent URL
	connected string // "" while talking to the local agent
	servers   func() ([]replServer, error)
	tasks     map[string]*replTask
	out       io.Writer
	listen    listenConfig
	listener  *replListener // the running :listen child, if any
	// log gets every line read, after the prompt out printed (--log-file).
	log io.Writer
	// remember adds a connected agent to the directory; nil remembers nothing.
	remember func(url string, card *a2a.AgentCard) error
}

// replTask is the conversation with one agent: its context and the task
// waiting for input, if any.
type replTask struct {
	contextID string
	taskID    a2a.TaskID
	question  string
	name      string
	// credential says the task waits for a credential (auth-required):
	// the next line is a secret, read without echo and never logged.
	credential bool
}

func newREPLSession(s replSender, local string, servers func() ([]replServer, error), out io.Writer) *replSession {
	return &replSession{sender: s, local: local, agent: local, servers: servers, tasks: map[string]*replTask{}, out: out}
}

func (r *replSession) current() string {
	if r.connected != "" {
		return r.connected
	}
	return r.local
}

func (r *replSession) task(url string) *replTask {
	t, ok := r.tasks[url]
	if !ok {
		t = &replTask{}
		r.tasks[url] = t
	}
	return t
}

// prompt names the agent and, when its task waits, the question.
func (r *replSession) prompt() string {
	t := r.task(r.current())
	name := t.name
	if name == "" {
		name = r.current()
	}
	if t.taskID != "" && t.credential {
		return fmt.Sprintf("%s [auth-required: %s]> ", name, t.question)
	}
	if t.taskID != "" {
		return fmt.Sprintf("%s [input-required: %s]> ", name, t.question)
	}
	return name + "> "
}

// wantsCredential reports whether the next line answers a credential
// request: the current agent's task is auth-required.
func (r *replSession) wantsCredential() bool {
	t := r.task(r.current())
	return t.taskID != "" && t.credential
}

// handleCredential runs a line typed in answer to a credential request: a
// ":command" runs as such (":quit" leaves), anything else is the secret,
// sent as it is (no plain-text command: a secret may be the word "help").
func (r *replSession) handleCredential(ctx context.Context, line string) error {
	if strings.HasPrefix(strings.TrimSpace(line), ":") {
		return r.handle(ctx, line)
	}
	if strings.TrimSpace(line) == "" {
		return nil
	}
	return r.send(ctx, r.current(), strings.TrimSpace(line))
}

// handle runs one line; errors are shown and the REPL goes on, errQuit ends it.
func (r *replSession) handle(ctx context.Context, line string) error {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	if !strings.HasPrefix(line, ":") {
		cmd, ok := plainCommand(line)
		if !ok {
			return r.send(ctx, r.current(), line)
		}
		line = cmd
	}
	cmd, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch cmd {
	case ":help":
		fmt.Fprint(r.out, replHelp)
	case ":quit", ":exit":
		return errQuit
	case ":card":
		card, err := r.sender.Card(ctx, r.current())
		if err != nil {
			return err
		}
		r.task(r.current()).name = card.Name
		printCard(r.out, card)
	case ":servers":
		return r.printServers()
	case ":connect":
		return r.connect(ctx, arg)
	case ":disconnect":
		r.connected = ""
		fmt.Fprintf(r.out, "Back to the local agent %s\n", r.local)
	case ":remote":
		if r.connected == "" {
			return errors.New(":remote: no remote agent connected, use :connect first")
		}
		if arg == "" {
			return errors.New(":remote needs a message, or :tool NAME [JSON]")
		}
		if name, rest, _ := strings.Cut(arg, " "); name == ":tool" {
			// The seed's ":remote :tool list_agents": the connected
			// a2aflow's router runs its own tool.
			return r.tool(ctx, r.connected, strings.TrimSpace(rest))
		}
		return r.send(ctx, r.connected, arg)
	case ":listen":
		return r.startListening(ctx, arg)
	case ":stop":
		if r.listener == nil {
			return errors.New(":stop: nothing is listening, see :listen PORT")
		}
		r.stopListening()
	case ":tool":
		return r.tool(ctx, r.local, arg)
	default:
		return fmt.Errorf("unknown command %s, see :help", cmd)
	}
	return nil
}

// printServers lists the agents :connect takes, the current one marked.
func (r *replSession) printServers() error {
	list, err := r.serverList()
	if err != nil {
		return err
	}
	for i, s := range list {
		mark := " "
		if s.url == r.current() {
			mark = "*"
		}
		fmt.Fprintf(r.out, "%s %d %s %s\n", mark, i, s.name, s.url)
	}
	return nil
}

// connect makes the agent arg names (a URL, or a number of :servers) the
// one lines go to.
func (r *replSession) connect(ctx context.Context, arg string) error {
	if arg == "" {
		return errors.New(":connect needs a URL or a number from :servers")
	}
	url := arg
	if n, err := strconv.Atoi(arg); err == nil {
		list, err := r.serverList()
		if err != nil {
			return err
		}
		if n < 0 || n >= len(list) {
			return fmt.Errorf(":connect %d: no such server, see :servers", n)
		}
		url = list[n].url
	}
	card, err := r.sender.Card(ctx, url)
	if err != nil {
		return err
	}
	r.task(url).name = card.Name
	if url == r.local {
		url = ""
	}
	r.connected = url
	fmt.Fprintf(r.out, "Connected to %s (%s)\n", card.Name, r.current())
	if url != "" {
		r.rememberAgent(url, card)
	}
	return nil
}

// plainCommands are the words a line without ":" may start with to be a
// command (the seed's execute_command keywords), each with the number of
// arguments it takes.
var plainCommands = map[string]struct {
	cmd  string
	args int
}{
	"connect": {":connect", 1}, "disconnect": {":disconnect", 0}, "list servers": {":servers", 0},
	"servers": {":servers", 0}, "card": {":card", 0}, "help": {":help", 0}, "quit": {":quit", 0}, "exit": {":quit", 0},
}

// plainCommand maps a plain-text line onto its REPL command: "connect URL"
// is ":connect URL", "list servers" is ":servers". Only an exact shape
// counts (the keyword, then exactly its arguments, a URL or a number for
// connect), so "connect me with sales" stays a message.
func plainCommand(line string) (string, bool) {
	fields := strings.Fields(strings.ToLower(line))
	orig := strings.Fields(line)
	for n := 2; n >= 1; n-- {
		if len(fields) < n {
			continue
		}
		c, ok := plainCommands[strings.Join(fields[:n], " ")]
		if !ok || len(fields)-n != c.args {
			continue
		}
		if c.args == 0 {
			return c.cmd, true
		}
		arg := orig[n]
		if _, err := strconv.Atoi(arg); err != nil && !strings.Contains(arg, "://") && !strings.Contains(arg, ":") {
			return "", false
		}
		return c.cmd + " " + arg, true
	}
	return "", false
}

// rememberAgent adds url to the agent directory unless it is known already
// (the seed's discovery session); a failure is only reported.
func (r *replSession) rememberAgent(url string, card *a2a.AgentCard) {
	if r.remember == nil {
		return
	}
	list, err := r.serverList()
	if err == nil {
		for _, s := range list {
			if strings.TrimRight(s.url, "/") == strings.TrimRight(url, "/") {
				return
			}
		}
	}
	if err := r.remember(url, card); err != nil {
		fmt.Fprintf(r.out, "Not remembered in the agent directory: %v\n", err)
		return
	}
	fmt.Fprintf(r.out, "Remembered %s in the agent directory (see :servers)\n", card.Name)
}

func (r *replSession) serverList() ([]replServer, error) {
	list := []replServer{{name: "local", url: r.local}}
	if r.servers == nil {
		return list, nil
	}
	more, err := r.servers()
	if err != nil {
		return list, err
	}
	return append(list, more...), nil
}

// send sends text to url: an answer when its task waits, else a new task in
// the same context.
func (r *replSession) send(ctx context.Context, url, text string) error {
	t := r.task(url)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.TaskID, msg.ContextID = t.taskID, t.contextID
	res, err := r.sender.Send(ctx, url, msg)
	if err != nil {
		return a2aError("send", err)
	}
	t.taskID, t.question, t.credential = "", "", false
	return r.show(t, res)
}

// show prints the agent's reply and records in t its context and the task
// waiting for input, if any.
func (r *replSession) show(t *replTask, res a2a.SendMessageResult) error {
	switch v := res.(type) {
	case *a2a.Task:
		t.contextID = v.ContextID
		fmt.Fprintf(r.out, "Task %s: %s\n", v.ID, stateName(v.Status.State))
		text := replyText(v.Status.Message)
		switch v.Status.State {
		case a2a.TaskStateInputRequired:
			t.taskID, t.question = v.ID, text
			fmt.Fprintf(r.out, "Agent asks: %s\n", text)
		case a2a.TaskStateAuthRequired:
			question, service := credentialAsked(v.Status.Message)
			t.taskID, t.question, t.credential = v.ID, question, true
			fmt.Fprintf(r.out, "Agent asks for a credential: %s\n", question)
			fmt.Fprintf(r.out, "The next line is the %scredential: it is not shown as you type (on a terminal) and never logged; :quit leaves.\n", service)
		default:
			if shown, ok := r.sender.(interface{ shown(string) bool }); ok && shown.shown(text) {
				break // printed as the model wrote it
			}
			if text != "" {
				fmt.Fprintf(r.out, "Agent: %s\n", text)
			}
		}
		for _, a := range v.Artifacts {
			fmt.Fprintf(r.out, "Artifact %s: %s\n", a.Name, partsText(a.Parts))
		}
	case *a2a.Message:
		t.contextID = v.ContextID
		fmt.Fprintf(r.out, "Agent: %s\n", replyText(v))
	default:
		return fmt.Errorf("send: unexpected result %T", res)
	}
	return nil
}

// credentialAsked is what an auth-required status asks: its text, and
// what its credential request names ({"service": ..., "agent": ...}, the
// agent when a delegated agent asks), as "github " or "github (for agent
// beta) ", or "".
func credentialAsked(m *a2a.Message) (question, service string) {
	if m == nil {
		return "A credential, please.", ""
	}
	var texts []string
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		if p.Text() != "" {
			texts = append(texts, p.Text())
		}
		if d, ok := p.Data().(map[string]any); ok && service == "" {
			if s, ok := d["service"].(string); ok && s != "" {
				service = s + " "
				if agent, ok := d["agent"].(string); ok && agent != "" {
					service = fmt.Sprintf("%s(for agent %s) ", service, agent)
				}
			}
		}
	}
	if question = strings.Join(texts, " "); question == "" {
		question = "A credential, please."
	}
	return question, service
}

// replyText renders a reply's parts like partsText, leaving out a data part
// that only repeats a text part (a tool result sent both as JSON text and as
// data).
func replyText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	texts := map[string]bool{}
	for _, p := range m.Parts {
		if p != nil && p.Text() != "" {
			if c := canonicalJSON([]byte(p.Text())); c != "" {
				texts[c] = true
			}
		}
	}
	var parts a2a.ContentParts
	for _, p := range m.Parts {
		if p != nil && p.Text() == "" && p.Data() != nil {
			if raw, err := json.Marshal(p.Data()); err == nil && texts[canonicalJSON(raw)] {
				continue
			}
		}
		parts = append(parts, p)
	}
	return partsText(parts)
}

// canonicalJSON is raw re-encoded (sorted keys, no spaces) when it is JSON,
// else "".
func canonicalJSON(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	out, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(out)
}

// serverBase is the server part of an agent URL: the URL without a trailing
// "/agents/NAME", where a2aflow serves its named agents.
func serverBase(agentURL string) string {
	u := strings.TrimRight(agentURL, "/")
	if i := strings.LastIndex(u, "/agents/"); i >= 0 && !strings.Contains(u[i+len("/agents/"):], "/") {
		return u[:i]
	}
	return u
}

// tool runs ":tool NAME [JSON]": a data part {"tool": NAME, "params": JSON}
// to the router agent of agent's server (the local one, or the connected
// one for ":remote :tool"), which runs its local tool NAME.
func (r *replSession) tool(ctx context.Context, agent, arg string) error {
	name, params := arg, ""
	if i := strings.IndexAny(arg, " \t"); i >= 0 {
		name, params = arg[:i], strings.TrimSpace(arg[i+1:])
	}
	if name == "" || strings.HasPrefix(name, "{") {
		return errors.New(":tool needs a tool name and a JSON object, like :tool echo {\"text\":\"hi\"}")
	}
	if params == "" {
		params = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(params))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf(":tool %s: the parameters are not valid JSON (%v); give a JSON object, like {\"text\":\"hi\"}", name, err)
	}
	if dec.More() {
		return fmt.Errorf(":tool %s: the parameters must be one JSON object, found more after it", name)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf(":tool %s: the parameters must be a JSON object like {\"text\":\"hi\"}, not %s", name, jsonKind(v))
	}
	url := serverBase(agent) + "/agents/router"
	t := r.task(url)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool": name, "params": obj}))
	msg.ContextID = t.contextID // always a new task: a tool call answers no question
	res, err := r.sender.Send(ctx, url, msg)
	if err != nil {
		return a2aError("tool "+name+" (router agent "+url+")", err)
	}
	t.taskID, t.question, t.credential = "", "", false
	return r.show(t, res)
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// startListening runs ":listen PORT".
func (r *replSession) startListening(ctx context.Context, arg string) error {
	if r.listener != nil {
		return fmt.Errorf(":listen: already listening on %s; :stop first", r.listener.url)
	}
	if arg == "" {
		return errors.New(":listen needs a port, like :listen 8090")
	}
	port, err := strconv.Atoi(arg)
	if err != nil {
		return fmt.Errorf(":listen %s: a port is a number from 1 to 65535", arg)
	}
	fmt.Fprintf(r.out, "Starting a2aflow serve on http://127.0.0.1:%d...\n", port)
	l, err := startListener(ctx, r.listen, port)
	if err != nil {
		return err
	}
	r.listener = l
	r.setLocal(ctx, l.url)
	fmt.Fprint(r.out, l.describe())
	return nil
}

// stopListening stops the :listen child; the local agent is --agent again.
func (r *replSession) stopListening() {
	if r.listener == nil {
		return
	}
	r.listener.stop(r.out, r.listen.stopTimeout)
	r.listener = nil
	r.setLocal(context.Background(), r.agent)
	fmt.Fprintf(r.out, "The local agent is %s again\n", r.agent)
}

// setLocal makes url the local agent and names it from its card.
func (r *replSession) setLocal(ctx context.Context, url string) {
	r.local = url
	if r.connected == url {
		r.connected = ""
	}
	if r.task(url).name != "" {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if card, err := r.sender.Card(cctx, url); err == nil {
		r.task(url).name = card.Name
	}
}

// checkListener notices a :listen child that ended on its own.
func (r *replSession) checkListener(errOut io.Writer) {
	if r.listener == nil || !r.listener.child.exited() {
		return
	}
	l := r.listener
	fmt.Fprintf(errOut, "error: a2aflow serve on %s ended on its own (%s); last lines of %s:\n%s\n",
		l.url, l.child.exitErr(), l.logPath, logTail(l.logPath, 10))
	r.listener = nil
	r.setLocal(context.Background(), r.agent)
	fmt.Fprintf(r.out, "The local agent is %s again\n", r.agent)
}

// close stops what the session started.
func (r *replSession) close() {
	if r.listener != nil {
		r.listener.stop(r.out, r.listen.stopTimeout)
		r.listener = nil
	}
}

// run reads lines until :quit, end of input or the end of ctx (Ctrl-C), and
// then stops the :listen child, if any. A line that answers a credential
// request is read without echo when in is a terminal, and the log gets a
// placeholder instead.
func (r *replSession) run(ctx context.Context, in io.Reader, errOut io.Writer) error {
	defer r.close()
	reader := newLineReader(in)
	defer reader.restore()      // Ctrl-C while a credential is typed: echo back on
	requests := make(chan bool) // a line is wanted; true: a credential's
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		for {
			select {
			case secret := <-requests:
				line, err := reader.read(secret)
				if err != nil {
					readErr <- err
					return
				}
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		r.checkListener(errOut)
		fmt.Fprint(r.out, r.prompt())
		secret := r.wantsCredential()
		select {
		case requests <- secret:
		case <-ctx.Done():
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(r.out)
			fmt.Fprintln(errOut, "interrupted")
			return nil
		case err := <-readErr:
			fmt.Fprintln(r.out)
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case line := <-lines:
			if secret && reader.terminal {
				fmt.Fprintln(r.out) // the Enter typed was not echoed either
			}
			if r.log != nil {
				if secret && !strings.HasPrefix(strings.TrimSpace(line), ":") {
					fmt.Fprintln(r.log, credentialNotLogged)
				} else {
					fmt.Fprintln(r.log, line)
				}
			}
			r.checkListener(errOut) // it may have ended while the user typed
			var err error
			if secret {
				err = r.handleCredential(ctx, line)
			} else {
				err = r.handle(ctx, line)
			}
			if errors.Is(err, errQuit) {
				return nil
			}
			if err != nil {
				fmt.Fprintf(errOut, "error: %v\n", err)
			}
		}
	}
}

// clientSender sends through a2a-go clients, one per agent URL, built from
// the agent's card.
type clientSender struct {
	f       *Flags
	clients map[string]*a2aclient.Client
	cards   map[string]*a2a.AgentCard
	live    *livePrinter // prints the answers being written; nil: SendMessage
}

func (c *clientSender) Card(ctx context.Context, url string) (*a2a.AgentCard, error) {
	if card, ok := c.cards[url]; ok {
		return card, nil
	}
	card, err := resolveCard(ctx, c.f.httpClient(), url)
	if err != nil {
		return nil, err
	}
	c.cards[url] = card
	return card, nil
}

func (c *clientSender) Send(ctx context.Context, url string, msg *a2a.Message) (a2a.SendMessageResult, error) {
	cl, ok := c.clients[url]
	if !ok {
		card, err := c.Card(ctx, url)
		if err != nil {
			return nil, err
		}
		if cl, err = newA2AClient(ctx, c.f.httpClient(), card); err != nil {
			return nil, err
		}
		c.clients[url] = cl
	}
	card, err := c.Card(ctx, url)
	if err != nil || !card.Capabilities.Streaming || c.live == nil {
		return cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	}
	// An agent that streams: the model's answer is printed as it is
	// written (a2aflow's live answers), and the task read at the end.
	var last a2a.SendMessageResult
	var taskID a2a.TaskID
	for ev, err := range cl.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			c.live.end()
			return nil, err
		}
		switch e := ev.(type) {
		case *a2a.Message:
			last = e
		case *a2a.Task:
			taskID = e.ID
		case *a2a.TaskStatusUpdateEvent:
			taskID = e.TaskID
		case *a2a.TaskArtifactUpdateEvent:
			if isLive(e) {
				c.live.chunk(e)
			}
		}
	}
	c.live.end()
	if last != nil || taskID == "" {
		return last, nil
	}
	return cl.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
}

// shown reports whether text is the answer Send just printed live.
func (c *clientSender) shown(text string) bool { return c.live != nil && c.live.shown(text) }

func (c *clientSender) close() {
	for _, cl := range c.clients {
		_ = cl.Destroy()
	}
}

func newREPLCmd() *cobra.Command {
	f := &Flags{}
	var db cmdutil.Database // the agent directory
	var logFile string
	cmd := &cobra.Command{
		Use:   "repl [--agent URL]",
		Short: "Talk to A2A agents interactively (the local one, or any connected one)",
		Long:  "Read lines from stdin and send them to the local agent or a connected one.\n\n" + replHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.agent = strings.TrimRight(f.agent, "/")
			sender := &clientSender{f: f, clients: map[string]*a2aclient.Client{}, cards: map[string]*a2a.AgentCard{}}
			defer sender.close()
			servers := func() ([]replServer, error) {
				store, err := db.Open()
				if err != nil {
					return nil, err
				}
				defer store.Close()
				agents, err := store.Agents()
				if err != nil {
					return nil, err
				}
				var list []replServer
				for _, a := range agents {
					list = append(list, replServer{name: a.Name, url: a.URL})
				}
				return list, nil
			}
			// Ctrl-C and SIGTERM end the command context (main); a closed
			// terminal (SIGHUP) must too, so that :listen's child is stopped.
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGHUP)
			defer stop()
			out := cmd.OutOrStdout()
			var logW io.Writer
			if logFile != "" {
				lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
				if err != nil {
					return fmt.Errorf("--log-file: %w", err)
				}
				defer lf.Close()
				// The interaction log: what the REPL prints and every line typed.
				out, logW = io.MultiWriter(out, lf), lf
			}
			s := newREPLSession(sender, f.agent, servers, out)
			sender.live = &livePrinter{out: out, prefix: "Agent: "}
			s.log = logW
			s.remember = func(url string, card *a2a.AgentCard) error {
				store, err := db.Open()
				if err != nil {
					return err
				}
				defer store.Close()
				raw, err := json.Marshal(card)
				if err != nil {
					return err
				}
				now := time.Now()
				return store.AddAgent(&models.RemoteAgent{Shared: true, Name: card.Name, URL: url, Card: raw, LastSeen: &now, Healthy: true})
			}
			s.listen = listenConfig{dataDir: db.DataDir, database: db.Path()}
			if card, err := sender.Card(ctx, f.agent); err == nil {
				s.task(f.agent).name = card.Name
			} else {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", f.noAgent(err))
			}
			return s.run(ctx, cmd.InOrStdin(), cmd.ErrOrStderr())
		},
	}
	db.Bind(cmd.Flags())
	f.Bind(cmd, false)
	f.bindAgent(cmd.Flags(), "the local agent's base URL; default the local a2aflow server")
	cmdutil.Bind(cmd.Flags()).String(&logFile, "log-file", "A2AFLOW_REPL_LOG_FILE", "", "append the session (every line typed and everything printed) to this file")
	return cmd
}
