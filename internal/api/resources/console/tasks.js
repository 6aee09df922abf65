// The task list: every agent's tasks the caller may use, from one route
// (GET /task-list, one visibility query a page), newest first, with
// filters, cursor paging and a refresh every few seconds.

import * as api from "./api.js";
import {h, STATES, badge, ago, money, announce, reconcile} from "./util.js";

export const PAGE_SIZE = 20;
const REFRESH_MS = 3000;

// FILTERS are the list's filters: the hash's parameter, the route's, and
// the label of its field.
const FILTERS = [
  ["agent", "agent", "Agent"], ["state", "state", "State"], ["owner", "owner", "Owner"],
  ["schedule", "schedule", "Schedule"], ["context", "context", "Context"], ["q", "q", "Text"],
];

// mount shows the list in main, filtered by params; it returns the
// function that stops its refresh.
export function mount(main, params) {
  const filter = Object.fromEntries(FILTERS.map(([k]) => [k, params.get(k) || ""]));
  // tokens[i] is the page token of page i ("" for the first).
  let tokens = [""], page = 0, next = "", rows = [], loaded = false;
  let stopped = false, busy = false, controller = null;

  const agentSelect = h("select", {id: "f-agent", name: "agent"}, h("option", {value: ""}, "All agents"));
  const stateSelect = h("select", {id: "f-state", name: "state"}, h("option", {value: ""}, "Any state"),
    STATES.map(([v, label]) => h("option", {value: v}, label)));
  stateSelect.value = filter.state;
  const input = (id, name, placeholder, type = "text") =>
    h("input", {id, name, type, value: filter[name], placeholder, autocomplete: "off"});
  const fields = {
    agent: agentSelect, state: stateSelect,
    owner: input("f-owner", "owner", "principal"),
    schedule: input("f-schedule", "schedule", "schedule ID"),
    context: input("f-context", "context", "context ID"),
    q: input("f-q", "q", "words of the first message", "search"),
  };
  const form = h("form", {class: "filters", role: "search", "aria-label": "Filter tasks"},
    FILTERS.map(([k, , label]) => h("label", {class: k === "context" || k === "q" ? "wide" : ""}, label, fields[k])),
    h("button", {type: "submit"}, "Filter"));
  const prev = h("button", {type: "button", id: "prev-page", disabled: true}, "← Newer");
  const nextBtn = h("button", {type: "button", id: "next-page", disabled: true}, "Older →");
  const pageInfo = h("span", {class: "meta", id: "page-info"});
  const updated = h("span", {class: "meta", id: "updated"});
  const tbody = h("tbody", {id: "task-rows"});
  const table = h("table", {class: "tasks", id: "tasks"},
    h("caption", {}, "Tasks, the newest first"),
    h("thead", {}, h("tr", {}, ["Task", "State", "Waiting for", "Cost", "Age"].map(c => h("th", {scope: "col"}, c)))),
    tbody);
  const message = h("div", {id: "list-message", role: "status"});
  const start = newTaskForm();

  main.append(h("h1", {}, "Tasks"), form, start.details, h("div", {class: "listbar"}, prev, nextBtn, pageInfo, updated), message, table);

  form.addEventListener("submit", e => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const [k] of FILTERS) {
      const v = fields[k].value.trim();
      if (v) q.set(k, v);
    }
    const hash = "#/tasks" + (q.toString() ? "?" + q : "");
    if (location.hash === hash) refresh(); else location.hash = hash;
  });
  prev.addEventListener("click", () => { if (page > 0) { page--; refresh(true); } });
  nextBtn.addEventListener("click", () => {
    if (!next) return;
    tokens[page + 1] = next;
    page++;
    refresh(true);
  });

  // loadAgents fills the agent filter and the new task's form once.
  async function loadAgents() {
    const agents = await api.listAgents();
    for (const a of agents) agentSelect.append(h("option", {value: a.name}, a.name));
    agentSelect.value = filter.agent;
    start.setAgents(agents.map(a => a.name));
  }

  // refresh reads the current page: one request, whatever the agents.
  async function refresh(moved) {
    if (busy || stopped) return;
    busy = true;
    controller = new AbortController();
    try {
      if (!loaded) {
        await loadAgents();
        loaded = true;
      }
      const r = await api.taskList({...filter, pageSize: PAGE_SIZE, pageToken: tokens[page]}, controller.signal);
      rows = r.tasks || [];
      next = r.nextPageToken || "";
      message.replaceChildren();
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
    const old = new Map([...tbody.children].map(tr => [tr.dataset.key, tr]));
    const focused = document.activeElement && tbody.contains(document.activeElement) ? document.activeElement.closest("tr")?.dataset.key : null;
    const fresh = rows.map(t => {
      const key = t.agent + "/" + t.id;
      const age = (t.continued ? "run " : "") + ago(t.started, now);
      const cells = [t.summary, t.state, t.waitingFor || "", money(t.costUsd), t.schedule || "", t.forkOf || ""];
      const sig = JSON.stringify(cells);
      const tr = old.get(key);
      if (tr && tr.dataset.sig === sig) {
        const cell = tr.querySelector("td.age");
        if (cell.textContent !== age) cell.textContent = age; // the row stays, and its focus
        return tr;
      }
      const notes = [t.id];
      if (t.schedule) notes.push("schedule " + t.schedule);
      if (t.forkOf) notes.push("fork of " + t.forkOf);
      return h("tr", {dataset: {key, sig, task: t.id, agent: t.agent, state: t.state || ""}},
        h("td", {class: "summary", "data-label": "Task"},
          h("a", {href: "#/task/" + encodeURIComponent(t.agent) + "/" + encodeURIComponent(t.id)}, t.summary),
          h("div", {class: "meta"}, notes.join(" · "))),
        h("td", {"data-label": "State"}, badge(t.state)),
        h("td", {"data-label": "Waiting for", class: "waiting"}, cells[2]),
        h("td", {"data-label": "Cost", class: "num"}, cells[3]),
        h("td", {"data-label": "Age", class: "num age", title: t.started || ""}, age));
    });
    reconcile(tbody, fresh);
    if (focused) {
      const again = [...tbody.children].find(tr => tr.dataset.key === focused);
      if (again && !again.contains(document.activeElement)) again.querySelector("a")?.focus();
    }
    if (!fresh.length) tbody.replaceChildren(h("tr", {}, h("td", {colspan: 5, class: "empty"},
      FILTERS.some(([k]) => k !== "agent" && filter[k]) ? "No task matches." : "No tasks yet.")));
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
