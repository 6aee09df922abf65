package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/cli/server"
)

// configReference renders docs/config.md: every key of the config file
// (the process commands' flags), its environment variable, its default
// (with no A2AFLOW_* variable set), which commands take it and what it
// does; then the keys of the agents sections. TestConfigReference fails
// when the file differs.
func configReference(app *App) string {
	type entry struct {
		flag     *pflag.Flag
		commands []string
	}
	entries := map[string]*entry{}
	for _, cmd := range server.ProcessCommands(app) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || cmdutil.AliasOf(f) != "" {
				return
			}
			e := entries[f.Name]
			if e == nil {
				e = &entry{flag: f}
				entries[f.Name] = e
			}
			e.commands = append(e.commands, cmd.Name())
		})
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)

	var b strings.Builder
	b.WriteString(`# a2aflow configuration reference

<!-- Generated from the code by ` + "`go generate ./internal/cli`" + ` (go test ./internal/cli -run TestConfigReference -update); do not edit. -->

Every setting of the process commands (` + "`serve`, `api`, `worker`, `temporal`" + `) is a flag, an
environment variable and a key of the config file ` + "`a2aflow.toml`" + `, which ` + "`--config FILE`" + ` or
` + "`" + server.EnvConfigFile + "`" + ` names. Precedence: **flag > environment > file > default**. A key is the flag's
name, written as is (` + "`ui-oidc-issuer = \"https://...\"`" + `) or nested where natural
(` + "`[ui]` then `oidc-issuer = \"https://...\"`" + `); ` + "`_`" + ` reads as ` + "`-`" + `. Lists are TOML arrays, and
` + "`KEY=VALUE`" + ` flags (` + "`idle-timeout`, `temporal-dynamic-config`" + `) TOML tables. An unknown key or a
value the flag cannot take stops the command with one line naming the file and the key; a key of
another command is ignored, so one file serves every process. An environment variable the
setting cannot take (` + "`A2AFLOW_WAIT_TIMEOUT=soon`" + `) is refused the same way.
` + "`a2aflow config print [COMMAND] [--config FILE] [flags]`" + ` prints the effective settings with their
sources, secrets masked.

| key | environment | default | commands | description |
|---|---|---|---|---|
`)
	for _, n := range names {
		e := entries[n]
		f := e.flag
		env := cmdutil.Env(f)
		envCell := "—"
		if env != "" {
			envCell = "`" + env + "`"
		}
		def := f.DefValue
		if def == "" || def == "[]" {
			def = "—"
		} else {
			def = "`" + def + "`"
		}
		usage := f.Usage
		if env != "" {
			usage = strings.TrimSuffix(usage, " ("+env+")")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", n, envCell, def, strings.Join(e.commands, ", "), mdCell(usage))
	}
	writeDeprecated(&b, app)
	b.WriteString(`
## Agents

` + "`[[agents]]`" + ` sections (or ` + "`[agents.NAME]`" + ` tables) configure the agents of ` + "`serve`, `api` and `worker`" + `.
A section naming an agent of the program sets its ` + "`idle-timeout`, `while-working`, and the `model` and `provider`" + `
of its LLM calls (llm.WithDefaults around its handler); a section with a
` + "`system-prompt`" + ` defines an LLM agent without Go code, served and run as a Temporal workflow like
every other. Give the same file to the api and the worker processes: the api publishes the agent's
card, the worker runs it.

| key | description |
|---|---|
`)
	for _, k := range server.AgentKeys() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.Key, mdCell(k.Doc))
	}
	b.WriteString(`
An LLM agent's ` + "`[[agents.tool-approvals]]`" + ` tables gate its tools by name: a call for which ` + "`when`" + `
holds waits on an approval showing the tool, its arguments and the model's reason; approvers approve,
reject (the model reads why) or approve edited arguments.

| key | description |
|---|---|
`)
	for _, k := range server.ToolApprovalKeys() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.Key, mdCell(k.Doc))
	}
	b.WriteString(`
## MCP servers

` + "`[[mcp-servers]]`" + ` sections name the MCP servers whose tools LLM agents may call (an agent's
` + "`mcp-servers`" + `; llm.MCP in Go). The worker reads a server's tool list in an activity (recorded, so a
replay builds the same tools) and calls each tool in an activity of its own, with the call's
idempotency key in the request's ` + "`_meta`" + ` (` + "`io.a2aflow/idempotency-key`" + `).

| key | description |
|---|---|
`)
	for _, k := range server.MCPServerKeys() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.Key, mdCell(k.Doc))
	}
	b.WriteString(`
## LLM prices

` + "`[[llm-prices]]`" + ` sections are the worker's price table: what each provider's model costs, in USD per
million tokens. The worker prices every LLM call with it in the call's activity, so the cost is
recorded in the task's history with the answer (` + "`usage.costUSD`" + `); a call without a price costs 0.
Totals: the task's metadata and memo (` + "`a2aflow.llmUsage`" + `), ` + "`GET /usage`" + `, ` + "`a2aflow usage`" + ` and
the ` + "`a2aflow_llm_cost_usd_total`" + ` series ([cost and usage](guides/cost.md)).

| key | description |
|---|---|
`)
	for _, k := range server.LLMPriceKeys() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.Key, mdCell(k.Doc))
	}
	b.WriteString(`
## LLM limits

` + "`[[llm-limits]]`" + ` sections limit the LLM calls to a provider's model: how many may start per second
(` + "`rate`" + `) and how many may run at once (` + "`concurrency`" + `), across every worker process that shares
the database (` + "`--database`" + `, the data dir's SQLite file by default). A call waits for a slot in its
activity, heartbeating, without using up attempts of its retry policy; a worker that dies frees its
slots within 30 s ([limits on LLM calls](guides/llm-agents.md#limits-on-llm-calls)).

| key | description |
|---|---|
`)
	for _, k := range server.LLMLimitKeys() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.Key, mdCell(k.Doc))
	}
	b.WriteString(`
## LLM budgets

` + "`[[llm-budgets]]`" + ` sections are what a tenant's LLM calls may cost per day, week or month (UTC), in USD by
the ` + "`[[llm-prices]]`" + ` table. Before each call the worker sums the tenant's recorded calls of the period
(the usage table every worker shares); once they reached the budget, the task waits on an ordinary approval
("tenant acme spent 50.10 of 50.00 USD this month; allow 10.00 more?") instead of calling, or fails when the
budget or the agent says ` + "`fail`" + `. A task's own budget is its agent's ` + "`budget-usd`" + ` ([budgets](guides/cost.md#budgets)).

| key | description |
|---|---|
`)
	for _, k := range server.LLMBudgetKeys() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.Key, mdCell(k.Doc))
	}
	b.WriteString(`
Example:

` + "```toml" + `
http-addr = ":8080"
peer = ["weather=http://weather.internal:8080"]

[[agents]]
name = "travel"
idle-timeout = "72h"

[[agents]]
name = "helper"
description = "Answers questions; asks the weather agent when it needs to."
system-prompt = "You are a concise helper. Use the tools."
model = "gpt-4o-mini"
tools = ["calculator", "clock", "ask_user", "call_agent"]
remote-agents = ["weather"]

[[agents.skills]]
id = "help"
name = "Help"
description = "Answers questions with a calculator, a clock and the weather agent."
tags = ["llm"]
examples = ["Is it warmer in Lisbon than in Oslo?"]

[[mcp-servers]]
name = "payments"
url = "https://payments.internal/mcp"
credentials = "payments"

[[agents]]
name = "payables"
system-prompt = "You pay the invoices the user names, with pay_invoice."
mcp-servers = ["payments"]
mcp-tools = ["pay_invoice"]

[[agents.tool-approvals]]
tool = "pay_invoice"
when = "amount > 1000"
groups = ["finance"]
timeout = "48h"
grantable = true

[[agents]]
name = "researcher"
system-prompt = "You research what the user asks, step by step."
budget-usd = 5
budget-approvers = ["finance"]

[[llm-prices]]
provider = "openai"
model = "gpt-4o-mini*"
input = 0.15
cached-input = 0.075
output = 0.60

[[llm-limits]]
provider = "openai"
model = "gpt-4o*"
rate = 5
concurrency = 10

[[llm-budgets]]
tenant = "*"
period = "month"
usd = 200
approvers = ["finance"]
` + "```" + `
`)
	return b.String()
}

// writeDeprecated lists the names that a rename replaced, for every command
// (process commands and the others): they still work for one release, with
// a warning.
func writeDeprecated(b *strings.Builder, app *App) {
	type rename struct{ flag, env, newFlag, newEnv string }
	seen := map[rename][]string{}
	var order []rename
	var walk func(cmd *cobra.Command, path string)
	walk = func(cmd *cobra.Command, path string) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			flag, env := cmdutil.Former(f)
			if flag == "" && env == "" {
				return
			}
			r := rename{flag, env, f.Name, cmdutil.Env(f)}
			if _, ok := seen[r]; !ok {
				order = append(order, r)
			}
			if cmds := seen[r]; len(cmds) == 0 || cmds[len(cmds)-1] != path {
				seen[r] = append(cmds, path)
			}
		})
		for _, sub := range cmd.Commands() {
			name := sub.Name()
			if path != "" {
				name = path + " " + name
			}
			walk(sub, name)
		}
	}
	walk(NewRoot(app), "")
	if len(order) == 0 {
		return
	}
	sort.Slice(order, func(i, j int) bool { return order[i].newFlag+order[i].flag < order[j].newFlag+order[j].flag })
	b.WriteString(`
## Deprecated names

These settings were renamed. The old flag, environment variable and config file key still work
until the next release, each with a one-line warning on standard error naming the new one.

| deprecated | use instead | commands |
|---|---|---|
`)
	for _, r := range order {
		var old, now []string
		if r.flag != "" {
			old, now = append(old, "`--"+r.flag+"`"), append(now, "`--"+r.newFlag+"`")
		}
		if r.env != "" {
			old, now = append(old, "`"+r.env+"`"), append(now, "`"+r.newEnv+"`")
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", strings.Join(old, ", "), strings.Join(now, ", "), strings.Join(seen[r], ", "))
	}
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
