package activities

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// Set holds the implementations of a2aflow's built-in activities, as the
// worker configures them. A nil field leaves its activities unregistered: a
// task calling one fails with Temporal's "activity not registered" until a
// worker that has it picks the call up.
type Set struct {
	Webhooks         *Webhooks
	ApprovalWebhooks *ApprovalWebhooks
	LLM              *LLM
	Tasks            *Tasks
	HistoryPages     *HistoryPages
	Remote           *Remote
	Files            *Files
	// Directory is the agent directory; Register registers its AgentSkills
	// (its list_agents and remember_agent are LLM tools: agents.DirectoryTools).
	Directory *Directory
	// MCP is the MCP client: the tools of the MCP servers the worker is
	// configured with.
	MCP *MCP
}

// Register registers every activity of s under its name in
// wire.BuiltinActivities: the one place where the names the workflows
// call meet the Go methods that implement them. Renaming a method changes
// nothing a running task sees.
func (s Set) Register(r worker.ActivityRegistry) {
	reg := func(name string, fn any) {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	if s.ApprovalWebhooks != nil {
		reg(wire.ActivityNotifyApprovalWebhook, s.ApprovalWebhooks.NotifyApprovalWebhook)
	}
	if s.Remote != nil {
		reg(wire.ActivitySendRemoteMessage, s.Remote.SendRemoteMessage)
		reg(wire.ActivityFollowRemoteTask, s.Remote.FollowRemoteTask)
		reg(wire.ActivityCancelRemoteTask, s.Remote.CancelRemoteTask)
	}
	if s.HistoryPages != nil {
		reg(wire.ActivityStoreHistoryPage, s.HistoryPages.StoreHistoryPage)
	}
	if s.Webhooks != nil {
		reg(wire.ActivityDeliverPush, s.Webhooks.DeliverPushNotification)
	}
	if s.Tasks != nil {
		reg(wire.ActivityFetchTask, s.Tasks.FetchTask)
		reg(wire.ActivityContextHistory, s.Tasks.ContextHistory)
	}
	if s.LLM != nil {
		reg(wire.ActivityCompleteChat, s.LLM.completeChatAnswer)
	}
	if s.Files != nil {
		reg(wire.ActivityFetchFile, s.Files.FetchFile)
	}
	if s.Directory != nil {
		reg(wire.ActivityAgentSkills, s.Directory.AgentSkills)
	}
	if s.MCP != nil {
		reg(wire.ActivityListMCPTools, s.MCP.ListMCPTools)
		reg(wire.ActivityCallMCPTool, s.MCP.CallMCPTool)
	}
}
