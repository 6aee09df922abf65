// The task list: every agent's tasks from A2A ListTasks (HTTP+JSON), newest
// change first, with filters, paging and a refresh every few seconds.

import * as api from "./api.js";
import {h, STATES, badge, ago, money, textOf, announce, reconcile} from "./util.js";

export const PAGE_SIZE = 20;
const REFRESH_MS = 3000;

// summaries caches what a task's list row shows but ListTasks does not
// hold: its summary (agent and first line of its first message) and when it
// started, read once per task from its timeline's first page.
const summaries = new Map();
const summaryQueue = [];
let summaryWorkers = 0;

// waitingOf says what a listed task waits for, from its status message: an
// approval or a waitpoint (their data parts), a credential, or an answer.
export function waitingOf(task) {
  const s = task.status || {};
  if (s.state !== "TASK_STATE_INPUT_REQUIRED" && s.state !== "TASK_STATE_AUTH_REQUIRED") return "";
  const parts = (s.message && s.message.parts) || [];
  for (const p of parts) {
    const d = p.data;
    if (d && typeof d === "object") {
      if (d.approvalId) return "approval: " + (d.title || d.approvalId);
      if (d.waitpointId) return "waitpoint: " + (d.name || d.waitpointId);
      if (s.state === "TASK_STATE_AUTH_REQUIRED" && d.service) return "credential: " + d.service;
    }
  }
  const text = textOf(s.message);
  return (s.state === "TASK_STATE_AUTH_REQUIRED" ? "credential: " : "input: ") + (text || "an answer");
}

// costOf is the task's LLM cost so far, from its usage metadata.
const costOf = task => {
  const u = task.metadata && task.metadata["a2aflow.llmUsage"];
  return u ? u.costUSD || 0 : undefined;
};

// firstLine is the first line of a text, cut to 80 characters.
const firstLine = text => {
  const line = String(text || "").split("\n").find(l => l.trim()) || "";
  return line.length > 80 ? line.slice(0, 79) + "…" : line;
};

// loadSummary reads a task's summary from its timeline's first entry, or,
// on a server without timelines, from its first message (GetTask).
async function loadSummary(agent, id) {
  try {
    const t = await api.timeline(agent, id, {pageSize: 1});
    const first = (t.entries || [])[0];
    return {summary: t.summary || agent + " · " + id, started: first && first.time};
  } catch (e) {
    if (e.unauthenticated) throw e;
    const task = await api.getTask(agent, id);
    const first = (task.history || []).find(m => m.role === "ROLE_USER");
    return {summary: agent + " · " + (firstLine(textOf(first)) || id)};
  }
}

// wantSummary queues the summary of a task not read yet; onDone runs when
// it arrives. At most four are read at a time.
function wantSummary(agent, id, onDone) {
  const key = agent + "/" + id;
  if (summaries.has(key)) return;
  summaries.set(key, null);
  summaryQueue.push({agent, id, key, onDone});
  pumpSummaries();
}

function pumpSummaries() {
  while (summaryWorkers < 4 && summaryQueue.length) {
    const {agent, id, key, onDone} = summaryQueue.shift();
    summaryWorkers++;
    // A task whose summary cannot be read keeps its ID as one: asking
    // again at every render would flood the server.
    loadSummary(agent, id)
      .then(s => summaries.set(key, s), () => summaries.set(key, {summary: agent + " · " + id}))
      .finally(() => { summaryWorkers--; onDone(); pumpSummaries(); });
  }
}

// mount shows the list in main, filtered by params; it returns the
// function that stops its refresh.
export function mount(main, params) {
  const filter = {
    agent: params.get("agent") || "", state: params.get("state") || "",
    context: params.get("context") || "", q: params.get("q") || "",
  };
  // pages[i] is the page token of each agent for page i; null: no more.
  let pages = [{}], page = 0, next = null, rows = [], agents = [], notes = [];
  let stopped = false, busy = false, controller = null;

  const agentSelect = h("select", {id: "f-agent", name: "agent"}, h("option", {value: ""}, "All agents"));
  const stateSelect = h("select", {id: "f-state", name: "state"}, h("option", {value: ""}, "Any state"),
    STATES.map(([v, label]) => h("option", {value: v}, label)));
  stateSelect.value = filter.state;
  const contextInput = h("input", {id: "f-context", name: "context", value: filter.context, placeholder: "context ID", autocomplete: "off"});
  const textInput = h("input", {id: "f-q", name: "q", type: "search", value: filter.q, placeholder: "text in the summary", autocomplete: "off"});
  const form = h("form", {class: "filters", role: "search", "aria-label": "Filter tasks"},
    h("label", {}, "Agent", agentSelect),
    h("label", {}, "State", stateSelect),
    h("label", {class: "wide"}, "Context", contextInput),
    h("label", {class: "wide"}, "Text", textInput),
    h("button", {type: "submit"}, "Filter"));
  const prev = h("button", {type: "button", id: "prev-page", disabled: true}, "← Newer");
  const nextBtn = h("button", {type: "button", id: "next-page", disabled: true}, "Older →");
  const pageInfo = h("span", {class: "meta", id: "page-info"});
  const updated = h("span", {class: "meta", id: "updated"});
  const tbody = h("tbody", {id: "task-rows"});
  const table = h("table", {class: "tasks", id: "tasks"},
    h("caption", {}, "Tasks, the latest change first"),
    h("thead", {}, h("tr", {}, ["Task", "State", "Waiting for", "Cost", "Age"].map(c => h("th", {scope: "col"}, c)))),
    tbody);
  const message = h("div", {id: "list-message", role: "status"});
  const start = newTaskForm();

  main.append(h("h1", {}, "Tasks"), form, start.details, h("div", {class: "listbar"}, prev, nextBtn, pageInfo, updated), message, table);

  form.addEventListener("submit", e => {
    e.preventDefault();
    const q = new URLSearchParams();
    if (agentSelect.value) q.set("agent", agentSelect.value);
    if (stateSelect.value) q.set("state", stateSelect.value);
    if (contextInput.value.trim()) q.set("context", contextInput.value.trim());
    if (textInput.value.trim()) q.set("q", textInput.value.trim());
    const hash = "#/tasks" + (q.toString() ? "?" + q : "");
    if (location.hash === hash) refresh(); else location.hash = hash;
  });
  textInput.addEventListener("input", () => { filter.q = textInput.value.trim(); render(); });
  prev.addEventListener("click", () => { if (page > 0) { page--; refresh(true); } });
  nextBtn.addEventListener("click", () => {
    if (!next) return;
    pages[page + 1] = next;
    page++;
    refresh(true);
  });

  // refresh reads the current page of every selected agent and merges them.
  async function refresh(moved) {
    if (busy || stopped) return;
    busy = true;
    controller = new AbortController();
    try {
      if (!agents.length) {
        agents = await api.listAgents();
        for (const a of agents) agentSelect.append(h("option", {value: a.name}, a.name));
        agentSelect.value = filter.agent;
        start.setAgents(agents.map(a => a.name));
      }
      const names = filter.agent ? [filter.agent] : agents.map(a => a.name);
      const tokens = pages[page];
      const got = await Promise.all(names.filter(n => tokens[n] !== null).map(async n => {
        try {
          const r = await api.listTasks(n, {contextId: filter.context, status: filter.state, pageSize: PAGE_SIZE, pageToken: tokens[n]}, controller.signal);
          return {agent: n, tasks: r.tasks || [], next: r.nextPageToken || null, total: r.totalSize};
        } catch (e) {
          if (e.unauthenticated) throw e;
          return {agent: n, error: e};
        }
      }));
      notes = got.filter(g => g.error && g.error.status !== 403).map(g => g.agent + ": " + g.error.message);
      rows = got.flatMap(g => (g.tasks || []).map(t => ({agent: g.agent, task: t})));
      rows.sort((a, b) => String(b.task.status?.timestamp || "").localeCompare(String(a.task.status?.timestamp || "")));
      const nextTokens = {};
      let more = false;
      for (const n of names) {
        const g = got.find(x => x.agent === n);
        nextTokens[n] = g ? g.next : null;
        if (g && g.next) more = true;
      }
      next = more ? nextTokens : null;
      message.replaceChildren(...notes.map(n => h("p", {class: "error"}, n)));
      updated.textContent = "updated " + new Date().toLocaleTimeString();
      render();
      if (moved) announce(`Page ${page + 1}: ${rows.length} tasks.`);
    } catch (e) {
      if (e.name === "AbortError") return;
      rows = [];
      render();
      message.replaceChildren(h("p", {class: "error"}, e.unauthenticated
        ? "Sign in: the server wants an API key or a bearer token (" + e.message + ")."
        : "Cannot list the tasks: " + e.message));
    } finally {
      busy = false;
    }
  }

  // render shows the rows, updating the table in place: a row whose
  // content did not change stays the same element (its age updated), so a
  // focused link keeps its focus across refreshes.
  function render() {
    const now = Date.now();
    const shown = [];
    for (const r of rows) {
      const key = r.agent + "/" + r.task.id;
      const s = summaries.get(key);
      if (s === undefined) wantSummary(r.agent, r.task.id, render);
      const summary = s ? s.summary : r.agent + " · …";
      if (filter.q && !(s && summary.toLowerCase().includes(filter.q.toLowerCase()))) continue;
      shown.push({r, key, summary, started: s && s.started});
    }
    const old = new Map([...tbody.children].map(tr => [tr.dataset.key, tr]));
    const focused = document.activeElement && tbody.contains(document.activeElement) ? document.activeElement.closest("tr")?.dataset.key : null;
    const fresh = shown.map(({r, key, summary, started}) => {
      const t = r.task;
      const age = started ? ago(started, now) : ago(t.status?.timestamp, now) && "updated " + ago(t.status?.timestamp, now) + " ago";
      const cells = [["Task", summary], ["State", t.status?.state], ["Waiting for", waitingOf(t)], ["Cost", money(costOf(t))]];
      const sig = JSON.stringify(cells);
      const tr = old.get(key);
      if (tr && tr.dataset.sig === sig) {
        const cell = tr.querySelector("td.age");
        if (cell.textContent !== age) cell.textContent = age; // the row stays, and its focus
        return tr;
      }
      const row = h("tr", {dataset: {key, sig, task: t.id, agent: r.agent, state: t.status?.state || ""}},
        h("td", {class: "summary", "data-label": "Task"},
          h("a", {href: "#/task/" + encodeURIComponent(r.agent) + "/" + encodeURIComponent(t.id)}, summary),
          h("div", {class: "meta"}, t.id)),
        h("td", {"data-label": "State"}, badge(t.status?.state)),
        h("td", {"data-label": "Waiting for", class: "waiting"}, cells[2][1]),
        h("td", {"data-label": "Cost", class: "num"}, cells[3][1]),
        h("td", {"data-label": "Age", class: "num age"}, age));
      return row;
    });
    reconcile(tbody, fresh);
    if (focused) {
      const again = [...tbody.children].find(tr => tr.dataset.key === focused);
      if (again && !again.contains(document.activeElement)) again.querySelector("a")?.focus();
    }
    if (!fresh.length) tbody.replaceChildren(h("tr", {}, h("td", {colspan: 5, class: "empty"},
      filter.q || filter.state || filter.context ? "No task matches." : "No tasks yet.")));
    prev.disabled = page === 0;
    nextBtn.disabled = !next;
    pageInfo.textContent = "page " + (page + 1);
  }

  refresh();
  const timer = setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
    if (controller) controller.abort();
  };
}

// newTaskForm starts a task: an agent and a first message.
function newTaskForm() {
  const agent = h("select", {id: "new-agent", name: "agent"});
  const text = h("textarea", {id: "new-text", rows: 2, placeholder: "Book a flight", required: true});
  const error = h("span", {class: "error", role: "alert"});
  const form = h("form", {class: "reply", "aria-label": "Start a task"},
    h("div", {class: "row"}, h("label", {}, "Agent", agent), h("label", {style: "flex:1"}, "First message", text)),
    h("div", {class: "row"}, h("button", {type: "submit", class: "primary"}, "Start the task"), error));
  const details = h("details", {class: "panel"}, h("summary", {}, "Start a task"), form);
  form.addEventListener("submit", async e => {
    e.preventDefault();
    error.textContent = "";
    try {
      const r = await api.sendMessage(agent.value, [{text: text.value}]);
      const t = r.task || {};
      location.hash = "#/task/" + encodeURIComponent(agent.value) + "/" + encodeURIComponent(t.id);
    } catch (err) {
      error.textContent = err.message;
    }
  });
  return {details, setAgents: names => agent.replaceChildren(...names.map(n => h("option", {value: n}, n)))};
}
