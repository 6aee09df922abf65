package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/engine"
	"github.com/a2aflow/a2aflow/internal/wire"
	"github.com/a2aflow/a2aflow/workflows"
)

// The examples run their agents in Temporal's test environment
// (go.temporal.io/sdk/testsuite), whose clock jumps over waits: a task that
// waits two days for an answer runs in milliseconds, and the examples'
// outputs are checked by go test. In a2aflow the same handlers run on a real
// worker, each task a TaskWorkflow execution.

// exampleEnv returns a test environment running the task workflow for the
// agents, with the workflow ID (the task ID) "task-1" and quiet logs.
func exampleEnv(agents ...*workflows.Agent) *testsuite.TestWorkflowEnvironment {
	reg, err := engine.NewRegistry(agents...)
	if err != nil {
		panic(err)
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(engine.TaskWorkflow(reg, engine.Options{}), workflow.RegisterOptions{Name: wire.TaskWorkflowName})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "task-1"})
	return env
}

// exampleRun starts a task of agent with the user's first message and
// returns the task as it ended.
func exampleRun(env *testsuite.TestWorkflowEnvironment, agent, text string) *a2a.Task {
	env.ExecuteWorkflow(wire.TaskWorkflowName, wire.TaskInput{
		Agent:   agent,
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)),
	})
	var task a2a.Task
	if err := env.GetWorkflowResult(&task); err != nil {
		panic(err)
	}
	return &task
}

// exampleAnswer sends the user's message to the task at the workflow time
// after, as the A2A API does (the UpdateSendMessage update).
func exampleAnswer(env *testsuite.TestWorkflowEnvironment, after time.Duration, text string) {
	env.RegisterDelayedCallback(func() {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		env.UpdateWorkflow(wire.UpdateSendMessage, m.ID, &testsuite.TestUpdateCallback{
			OnAccept:   func() {},
			OnReject:   func(err error) { fmt.Println("refused:", err) },
			OnComplete: func(any, error) {},
		}, wire.SendMessageInput{Message: m, ReturnImmediately: true})
	}, after)
}

// examplePrintStatus prints the task's status at the workflow time after, as
// the A2A API reads it (the GetTask query).
func examplePrintStatus(env *testsuite.TestWorkflowEnvironment, after time.Duration) {
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(wire.QueryGetTask, wire.GetTaskInput{})
		var task a2a.Task
		if err == nil {
			err = v.Get(&task)
		}
		if err != nil {
			fmt.Println("query:", err)
			return
		}
		fmt.Printf("after %s: %s %q\n", after, task.Status.State, workflows.MessageText(task.Status.Message))
	}, after)
}

// examplePrintTask prints the task's end state, status message and artifacts.
func examplePrintTask(task *a2a.Task) {
	if text := workflows.MessageText(task.Status.Message); text != "" {
		fmt.Println(task.Status.State, text)
	} else {
		fmt.Println(task.Status.State)
	}
	for _, a := range task.Artifacts {
		var content []string
		for _, p := range a.Parts {
			if p.Data() != nil {
				raw, _ := json.Marshal(p.Data())
				content = append(content, string(raw))
			} else {
				content = append(content, p.Text())
			}
		}
		fmt.Printf("artifact %s: %s\n", a.Name, strings.Join(content, " "))
	}
}

// An Agent is its card (name, description, skills) and a Handler: workflow
// code that runs each of its tasks. Returning nil completes the task,
// workflows.Reject rejects it, any other error fails it.
func ExampleAgent() {
	greeter := &workflows.Agent{
		Name:        "greeter",
		Description: "Greets you by name.",
		Skills:      []a2a.AgentSkill{{ID: "greet", Name: "Greet", Description: "Greets whoever the message names."}},
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			name := strings.TrimSpace(t.Text())
			if name == "" {
				return workflows.Reject("tell me your name")
			}
			t.Artifact(ctx, workflows.TextArtifact("greeting", "Hello, "+name+"!"))
			return nil
		},
	}

	// a2aflow serves a Registry of agents, the first being the default one.
	reg, err := engine.NewRegistry(greeter)
	if err != nil {
		panic(err)
	}
	fmt.Println(reg.Names(), reg.Default().DefaultSkill())

	examplePrintTask(exampleRun(exampleEnv(greeter), "greeter", "Ada"))
	examplePrintTask(exampleRun(exampleEnv(greeter), "greeter", " "))
	// Output:
	// [greeter] greet
	// TASK_STATE_COMPLETED
	// artifact greeting: Hello, Ada!
	// TASK_STATE_REJECTED tell me your name
}

// Ask makes the task input-required with a question, and returns the user's
// answer when it comes: seconds or weeks later, across restarts of the
// worker. Here the user answers after an hour, then after two days.
func ExampleTask_Ask() {
	travel := &workflows.Agent{
		Name: "travel",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			dest, err := t.Ask(ctx, "destination", "Where to?")
			if err != nil {
				return err // the task was canceled while it waited
			}
			date, err := t.Ask(ctx, "date", "On which date? (YYYY-MM-DD)")
			if err != nil {
				return err
			}
			t.Artifact(ctx, workflows.JSONArtifact("booking", map[string]string{
				"to":   workflows.MessageText(dest),
				"date": workflows.MessageText(date),
			}))
			return nil
		},
	}

	env := exampleEnv(travel)
	examplePrintStatus(env, 30*time.Minute)
	exampleAnswer(env, time.Hour, "Lisbon")
	examplePrintStatus(env, 24*time.Hour)
	exampleAnswer(env, 49*time.Hour, "2026-12-24")
	examplePrintTask(exampleRun(env, "travel", "Book a flight"))
	// Output:
	// after 30m0s: TASK_STATE_INPUT_REQUIRED "Where to?"
	// after 24h0m0s: TASK_STATE_INPUT_REQUIRED "On which date? (YYYY-MM-DD)"
	// TASK_STATE_COMPLETED
	// artifact booking: {"date":"2026-12-24","to":"Lisbon"}
}

// Approve asks people in approver groups to decide, and waits for their
// decision (or the deadline) durably. Every way of deciding — an A2A message
// with a decision data part, the REST approvals API, `a2aflow approve`,
// the inbox page — ends in the task's DecideApproval update, sent here
// directly. The first task is approved by fiona of finance after three hours;
// nobody decides the second, which the deadline rejects two days later.
func ExampleTask_Approve() {
	expenses := &workflows.Agent{
		Name: "expenses",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			amount, err := strconv.Atoi(t.Text())
			if err != nil {
				return workflows.Reject("send the amount in EUR")
			}
			approval, err := t.Approve(ctx, workflows.ApprovalRequest{
				Title:     fmt.Sprintf("Pay %d EUR?", amount),
				Action:    map[string]int{"amount": amount},
				Groups:    []string{"finance"},
				Timeout:   48 * time.Hour,
				OnTimeout: workflows.RejectAtDeadline,
			})
			if err != nil {
				return err
			}
			d := approval.Decisions[len(approval.Decisions)-1]
			if !approval.Approved() {
				return workflows.Reject(fmt.Sprintf("%s by %s: %s", approval.State, d.Approver, d.Comment))
			}
			t.Artifact(ctx, workflows.JSONArtifact("payment", map[string]any{"amount": amount, "approvedBy": d.Approver}))
			return nil
		},
	}

	for _, decide := range []bool{true, false} {
		env := exampleEnv(expenses)
		// Approve notifies each group's webhook by an activity; the worker
		// runs it as a no-op for a group without one.
		env.RegisterActivityWithOptions(func(context.Context, wire.ApprovalNotice) error { return nil },
			activity.RegisterOptions{Name: wire.ActivityNotifyApprovalWebhook})
		examplePrintStatus(env, time.Hour)
		if decide {
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(wire.UpdateDecideApproval, "", &testsuite.TestUpdateCallback{
					OnAccept: func() {},
					OnReject: func(err error) { fmt.Println("refused:", err) },
					OnComplete: func(v any, err error) {
						if a, ok := v.(workflows.Approval); ok {
							fmt.Println("decided:", a.ID, a.State)
						}
					},
				}, wire.DecideApprovalInput{
					ApprovalID:     "task-1-approval-1", // the task's first approval
					Approved:       true,
					Comment:        "within budget",
					Approver:       "fiona",
					ApproverGroups: []string{"finance"},
					Via:            "rest",
				})
			}, 3*time.Hour)
		}
		examplePrintTask(exampleRun(env, "expenses", "420"))
	}
	// Output:
	// after 1h0m0s: TASK_STATE_INPUT_REQUIRED "Waiting for approval: \"Pay 420 EUR?\" by finance."
	// decided: task-1-approval-1 approved
	// TASK_STATE_COMPLETED
	// artifact payment: {"amount":420,"approvedBy":"fiona"}
	// after 1h0m0s: TASK_STATE_INPUT_REQUIRED "Waiting for approval: \"Pay 420 EUR?\" by finance."
	// TASK_STATE_REJECTED rejected by deadline: no decision before the deadline
}

// CallAgent delegates to another A2A agent, by its name in the agent
// directory or its URL, and follows the remote task to its end. The remote
// task's questions go to our user (or to CallRequest.Answer), and its
// artifacts are added to our task. Sending and following are activities
// (activities.Remote on a real worker), faked here: the remote "hotels"
// agent asks for the number of nights, then works, then completes with a
// quote.
func ExampleTask_CallAgent() {
	planner := &workflows.Agent{
		Name: "planner",
		Handle: func(ctx workflow.Context, t *workflows.Task) error {
			res, err := t.CallAgent(ctx, workflows.CallRequest{
				Agent: "hotels",
				Text:  "A hotel in " + t.Text(),
			})
			if err != nil {
				return err // e.g. a *workflows.RemoteTaskError: the remote task failed
			}
			t.Reply("hotels says: " + res.Text())
			return nil
		},
	}

	env := exampleEnv(planner)
	var mu sync.Mutex
	var received []string // what the remote agent received
	env.RegisterActivityWithOptions(func(_ context.Context, in wire.RemoteSendInput) (wire.RemoteTaskResult, error) {
		mu.Lock()
		received = append(received, workflows.MessageText(in.Message))
		mu.Unlock()
		if in.Message.TaskID == "" { // a new remote task, which asks a question
			question := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("How many nights?"))
			return wire.RemoteTaskResult{Task: &a2a.Task{ID: "hotel-task", ContextID: "hotel-ctx",
				Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: question}}}, nil
		}
		return wire.RemoteTaskResult{Task: &a2a.Task{ID: in.Message.TaskID, ContextID: "hotel-ctx",
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}, nil
	}, activity.RegisterOptions{Name: wire.ActivitySendRemoteMessage})
	env.RegisterActivityWithOptions(func(_ context.Context, in wire.RemoteFollowInput) (wire.RemoteTaskResult, error) {
		done := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("3 nights at Casa Azul, 420 EUR"))
		return wire.RemoteTaskResult{Task: &a2a.Task{ID: in.TaskID, ContextID: "hotel-ctx",
			Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: done},
			Artifacts: []*a2a.Artifact{workflows.JSONArtifact("quote", map[string]any{"hotel": "Casa Azul", "eur": 420})}}}, nil
	}, activity.RegisterOptions{Name: wire.ActivityFollowRemoteTask})

	examplePrintStatus(env, 30*time.Minute)
	exampleAnswer(env, time.Hour, "3")
	task := exampleRun(env, "planner", "Lisbon")
	fmt.Println("the remote agent received:", strings.Join(received, " | "))
	examplePrintTask(task)
	// The task's metadata lists the remote tasks it delegated to.
	var delegations []workflows.Delegation
	raw, _ := json.Marshal(task.Metadata[wire.DelegationsMetadataKey])
	if err := json.Unmarshal(raw, &delegations); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", delegations)
	// Output:
	// after 30m0s: TASK_STATE_INPUT_REQUIRED "How many nights?"
	// the remote agent received: A hotel in Lisbon | 3
	// TASK_STATE_COMPLETED hotels says: 3 nights at Casa Azul, 420 EUR
	// artifact quote: {"eur":420,"hotel":"Casa Azul"}
	// [{Agent:hotels TaskID:hotel-task ContextID:hotel-ctx State:TASK_STATE_COMPLETED}]
}
