package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/spf13/cobra"
)

const replHelp = `Commands:
  :help              this help
  :card              the connected agent's card
  :servers           the known agents: the local one and the agent directory
  :connect URL|N     talk to the agent at URL, or number N of :servers
  :disconnect        back to the local agent
  :remote MESSAGE    send MESSAGE to the connected agent, staying with the local one
  :listen PORT       not supported in this build: run "a2aflow serve" instead
  :stop              not supported in this build (nothing is listening)
  :tool NAME JSON    not supported in this build: local tools run inside agents
  :quit              leave
Any other line is a message to the current agent; when a task waits for
input, the prompt says so and the next line answers it.
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
	local     string
	connected string // "" while talking to the local agent
	servers   func() ([]replServer, error)
	tasks     map[string]*replTask
	out       io.Writer
}

// replTask is the conversation with one agent: its context and the task
// waiting for input, if any.
type replTask struct {
	contextID string
	taskID    a2a.TaskID
	question  string
	name      string
}

func newREPLSession(s replSender, local string, servers func() ([]replServer, error), out io.Writer) *replSession {
	return &replSession{sender: s, local: local, servers: servers, tasks: map[string]*replTask{}, out: out}
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
	if t.taskID != "" {
		return fmt.Sprintf("%s [input-required: %s]> ", name, t.question)
	}
	return name + "> "
}

// handle runs one line; errors are shown and the REPL goes on, errQuit ends it.
func (r *replSession) handle(ctx context.Context, line string) error {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	if !strings.HasPrefix(line, ":") {
		return r.send(ctx, r.current(), line)
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
	case ":connect":
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
	case ":disconnect":
		r.connected = ""
		fmt.Fprintf(r.out, "Back to the local agent %s\n", r.local)
	case ":remote":
		if r.connected == "" {
			return errors.New(":remote: no remote agent connected, use :connect first")
		}
		if arg == "" {
			return errors.New(":remote needs a message")
		}
		return r.send(ctx, r.connected, arg)
	case ":listen", ":stop":
		return fmt.Errorf("%s is not supported in this build: the REPL is a client; run \"a2aflow serve\" to serve agents", cmd)
	case ":tool":
		return errors.New(":tool is not supported in this build: local tools run inside agents, send the agent a message instead")
	default:
		return fmt.Errorf("unknown command %s, see :help", cmd)
	}
	return nil
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
	t.taskID, t.question = "", ""
	switch v := res.(type) {
	case *a2a.Task:
		t.contextID = v.ContextID
		fmt.Fprintf(r.out, "Task %s: %s\n", v.ID, stateName(v.Status.State))
		text := messageText(v.Status.Message)
		switch v.Status.State {
		case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
			t.taskID, t.question = v.ID, text
			fmt.Fprintf(r.out, "Agent asks: %s\n", text)
		default:
			if text != "" {
				fmt.Fprintf(r.out, "Agent: %s\n", text)
			}
		}
		for _, a := range v.Artifacts {
			fmt.Fprintf(r.out, "Artifact %s: %s\n", a.Name, partsText(a.Parts))
		}
	case *a2a.Message:
		t.contextID = v.ContextID
		fmt.Fprintf(r.out, "Agent: %s\n", messageText(v))
	default:
		return fmt.Errorf("send: unexpected result %T", res)
	}
	return nil
}

// run reads lines until :quit or end of input.
func (r *replSession) run(ctx context.Context, in io.Reader, errOut io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for {
		fmt.Fprint(r.out, r.prompt())
		if !sc.Scan() {
			fmt.Fprintln(r.out)
			return sc.Err()
		}
		err := r.handle(ctx, sc.Text())
		if errors.Is(err, errQuit) {
			return nil
		}
		if err != nil {
			fmt.Fprintf(errOut, "error: %v\n", err)
		}
	}
}

// clientSender sends through a2a-go clients, one per agent URL, built from
// the agent's card.
type clientSender struct {
	f       *clientFlags
	clients map[string]*a2aclient.Client
	cards   map[string]*a2a.AgentCard
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
	return cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
}

func (c *clientSender) close() {
	for _, cl := range c.clients {
		_ = cl.Destroy()
	}
}

func newREPLCmd() *cobra.Command {
	d := &directoryFlags{}
	cmd := &cobra.Command{
		Use:   "repl [--agent URL]",
		Short: "Talk to A2A agents interactively (the local one, or any connected one)",
		Long:  "Read lines from stdin and send them to the local agent or a connected one.\n\n" + replHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d.client.agent = strings.TrimRight(d.client.agent, "/")
			sender := &clientSender{f: &d.client, clients: map[string]*a2aclient.Client{}, cards: map[string]*a2a.AgentCard{}}
			defer sender.close()
			servers := func() ([]replServer, error) {
				store, err := d.open()
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
			s := newREPLSession(sender, d.client.agent, servers, cmd.OutOrStdout())
			if card, err := sender.Card(cmd.Context(), d.client.agent); err == nil {
				s.task(d.client.agent).name = card.Name
			} else {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", err)
			}
			return s.run(cmd.Context(), cmd.InOrStdin(), cmd.ErrOrStderr())
		},
	}
	d.bind(cmd)
	cmd.Flags().StringVar(&d.client.agent, "agent", env("A2AFLOW_API_URL", "http://localhost:8080"), "the local agent's base URL (A2AFLOW_API_URL)")
	return cmd
}
