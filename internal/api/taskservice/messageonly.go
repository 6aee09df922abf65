package taskservice

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// messageOnlyAnswer is what SendMessage answers with for task t, sent by
// req: for a new message to a message-only agent (workflows.Agent.MessageOnly)
// whose task completed with a reply, that reply as a Message of the task's
// context naming no task (A2A §3.1.1: an agent may answer with a Message;
// the TCK's DM-MSG-001); otherwise the task.
func (s *TaskService) messageOnlyAnswer(req *a2a.SendMessageRequest, t *a2a.Task) a2a.SendMessageResult {
	if !s.messageOnly(req) || t == nil || t.Status.State != a2a.TaskStateCompleted {
		return t
	}
	reply := agentReply(t)
	if reply == nil {
		return t
	}
	m := *reply
	m.TaskID, m.ContextID = "", t.ContextID
	return &m
}

// messageOnly reports whether req is a new message (one that names no
// task) to a message-only agent, or one its MessageOnlyFor picks.
func (s *TaskService) messageOnly(req *a2a.SendMessageRequest) bool {
	if req == nil || req.Message == nil || req.Message.TaskID != "" {
		return false
	}
	return s.agent.MessageOnly || (s.agent.MessageOnlyFor != nil && s.agent.MessageOnlyFor(req.Message))
}

// agentReply is the agent's last message of t: its status message, else
// the last of its history.
func agentReply(t *a2a.Task) *a2a.Message {
	if m := t.Status.Message; m != nil && m.Role == a2a.MessageRoleAgent {
		return m
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		if m := t.History[i]; m != nil && m.Role == a2a.MessageRoleAgent {
			return m
		}
	}
	return nil
}
