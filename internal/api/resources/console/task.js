// A task: its timeline (GET .../tasks/{id}/timeline, in pages), the live
// answer as it streams (SubscribeToTask), and what its owner can do:
// reply, decide its approvals, complete its waitpoints, cancel, fork,
// retry. Every action is a route of the API.

import * as api from "./api.js";
import {h, badge, money, terminal, announce, readFileBase64, safeURL, reconcile} from "./util.js";
import {entryView} from "./entries.js";

const PAGE_SIZE = 200;
const FIRST_LOAD_PAGES = 5;
const REFRESH_MS = 3000;
const ENDED_REFRESH_MS = 10000;
const LIVE_KEY = "a2aflow.live";

export function mount(main, agent, id) {
  const ctx = {agent, taskId: id, onChanged: () => refreshSoon(), onForked, onError: showError};
  // tokens[i] starts page i of the timeline; entries by seq.
  let tokens = [""], more = false, head = null, stopped = false, busy = false;
  const entries = new Map();
  let stream = null, live = new Map(), lastRefresh = 0, soon = null;

  const title = h("h1", {id: "task-title"}, agent + " · " + id);
  const state = h("span", {id: "task-state"});
  const waiting = h("span", {id: "task-waiting", class: "meta"});
  const facts = h("dl", {class: "facts", id: "task-facts"});
  const actions = h("div", {class: "actions", id: "task-actions"});
  const message = h("div", {id: "task-message", role: "alert"});
  const waitPanel = h("section", {class: "panel waiting", id: "waiting-panel", "aria-labelledby": "waiting-title", hidden: true});
  const reply = replyForm();
  const list = h("ol", {class: "timeline", id: "timeline", "aria-label": "Timeline, oldest first"});
  const liveItem = h("li", {class: "live message agent", id: "live-answer", "aria-live": "polite", "aria-busy": "true", hidden: true});
  const loadMore = h("button", {type: "button", id: "load-more", hidden: true}, "Load more of the timeline");
  const forks = h("ul", {id: "task-forks", class: "forks"});
  const forksSection = h("section", {"aria-labelledby": "forks-title", hidden: true}, h("h2", {id: "forks-title"}, "Forks of this task"), forks);
  let forksRead = 0;

  main.append(h("p", {}, h("a", {href: "#/tasks"}, "← Tasks")), title,
    h("div", {class: "task-head"}, state, waiting), facts, actions, message, waitPanel,
    h("section", {"aria-labelledby": "timeline-title"}, h("h2", {id: "timeline-title"}, "Timeline"), list, h("div", {class: "pager"}, loadMore)),
    reply.panel, forksSection);

  loadMore.addEventListener("click", () => load(true));

  function showError(text) { message.replaceChildren(text ? h("p", {class: "error"}, text) : ""); }

  function onForked(t) {
    location.hash = "#/task/" + encodeURIComponent(agent) + "/" + encodeURIComponent(t.id);
  }

  // load reads the timeline from the start of its last page (the first
  // load: up to FIRST_LOAD_PAGES pages); next: the page after it.
  async function load(next) {
    if (busy || stopped) return;
    busy = true;
    try {
      if (next && more) tokens.push(head.nextPageToken);
      let pages = entries.size ? 1 : FIRST_LOAD_PAGES;
      for (;;) {
        const token = tokens[tokens.length - 1];
        const page = await api.timeline(agent, id, {pageSize: PAGE_SIZE, pageToken: token});
        head = page;
        const got = page.entries || [];
        const from = got.length ? got[0].seq : Infinity;
        for (const seq of [...entries.keys()]) if (seq >= from) entries.delete(seq);
        for (const e of got) entries.set(e.seq, e);
        more = !!page.nextPageToken;
        if (!more || --pages <= 0) break;
        tokens.push(page.nextPageToken);
      }
      showError("");
      render();
      follow();
      loadForks();
    } catch (err) {
      if (err.notFound) {
        showError("Task not found: it does not exist, or it is not yours.");
        title.textContent = "Task not found";
        stopped = true;
      } else if (err.unauthenticated) {
        showError("Sign in: the server wants an API key or a bearer token (" + err.message + ").");
      } else {
        showError("Cannot read the task: " + err.message);
      }
    } finally {
      busy = false;
      lastRefresh = Date.now();
    }
  }

  // loadForks lists the forks and retries of this task (GET /task-list
  // with forkOf: the A2AForkOf search attribute), at most every 10 s.
  async function loadForks() {
    if (Date.now() - forksRead < ENDED_REFRESH_MS) return;
    forksRead = Date.now();
    try {
      const rows = (await api.taskList({agent, forkOf: id, pageSize: 20})).tasks || [];
      forksSection.hidden = !rows.length;
      const sig = JSON.stringify(rows.map(t => [t.id, t.state]));
      if (forks.dataset.sig === sig) return;
      forks.dataset.sig = sig;
      forks.replaceChildren(...rows.map(t => h("li", {dataset: {task: t.id}},
        h("a", {href: "#/task/" + encodeURIComponent(t.agent) + "/" + encodeURIComponent(t.id)}, t.id), " ", badge(t.state))));
    } catch { /* an extra: the timeline stands without it */ }
  }

  function refreshSoon() {
    clearTimeout(soon);
    soon = setTimeout(() => load(false), 150);
  }

  // render shows the task's head and its entries; an entry whose content
  // did not change keeps its element (and what is typed into its forms).
  function render() {
    document.title = (head.summary || id) + " — a2aflow console";
    title.textContent = head.summary || agent + " · " + id;
    state.replaceChildren(badge(head.state));
    list.dataset.state = head.state;
    const w = head.waitingFor;
    waiting.textContent = w ? "waiting for " + (w.kind === "input" ? "an answer" : w.kind) : "";
    renderFacts();
    renderActions();
    renderWaiting(w);
    reply.show(!terminal(head.state), w);
    const old = new Map([...list.querySelectorAll(":scope > li[data-seq]")].map(li => [li.dataset.seq, li]));
    const items = [...entries.values()].sort((a, b) => a.seq - b.seq).map(e => {
      const sig = JSON.stringify(e);
      const li = old.get(String(e.seq));
      if (li && li.dataset.sig === sig) return li;
      const fresh = entryView(e, ctx);
      fresh.dataset.sig = sig;
      if (e.kind === "approval" && e.approval) fresh.dataset.approval = e.approval.id;
      return fresh;
    });
    reconcile(list, [...items, liveItem]);
    loadMore.hidden = !more;
  }

  function renderFacts() {
    const rows = [["Task", id], ["Agent", agent],
      ["Context", h("a", {href: "#/tasks?context=" + encodeURIComponent(head.contextId || "")}, head.contextId || "")]];
    if (head.costUsd !== undefined && head.costUsd !== null) rows.push(["Cost", money(head.costUsd)]);
    if (safeURL(head.temporalUrl)) rows.push(["Temporal", h("a", {href: safeURL(head.temporalUrl), target: "_blank", rel: "noopener"}, "the task's workflow in the Temporal UI")]);
    const sig = JSON.stringify([head.contextId, head.costUsd, head.temporalUrl]);
    if (facts.dataset.sig === sig) return;
    facts.dataset.sig = sig;
    facts.replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  }

  function renderActions() {
    const want = [];
    if (!terminal(head.state)) want.push(["cancel", "Cancel the task", "danger"]);
    if (head.state === "TASK_STATE_FAILED") want.push(["retry", "Retry from the failed step", "primary"]);
    const have = [...actions.children].map(b => b.dataset.action).join();
    if (have === want.map(w => w[0]).join()) return;
    actions.replaceChildren(...want.map(([action, label, cls]) =>
      h("button", {type: "button", class: cls, id: "action-" + action, dataset: {action}, onclick: () => act(action)}, label)));
  }

  async function act(action) {
    showError("");
    try {
      if (action === "cancel") {
        await api.cancelTask(agent, id);
        announce("The task is canceled.");
        refreshSoon();
      } else if (action === "retry") {
        const t = await api.retryTask(agent, id);
        announce("Retried as task " + t.id + ".");
        onForked(t);
      }
    } catch (err) {
      showError("Cannot " + action + ": " + err.message);
    }
  }

  // renderWaiting says what the task waits for and where to act on it.
  function renderWaiting(w) {
    const sig = JSON.stringify(w || null);
    if (waitPanel.dataset.sig === sig) return;
    waitPanel.dataset.sig = sig;
    waitPanel.hidden = !w;
    if (!w) { waitPanel.replaceChildren(); return; }
    const go = (text, selector) => h("button", {type: "button", onclick: () => {
      const target = document.querySelector(selector);
      if (target) { target.scrollIntoView({block: "center"}); (target.querySelector("textarea, input, button") || target).focus(); }
    }}, text);
    let act = null;
    if (w.kind === "approval" && w.approvalId) act = go("Decide it in the timeline", `li.approval[data-approval="${CSS.escape(w.approvalId)}"]`);
    else if (w.kind === "waitpoint" && w.waitpointId) act = go("Complete it in the timeline", "li.waitpoint form");
    else if (w.kind === "input" || w.kind === "credential") act = go("Answer", "#reply-form");
    waitPanel.replaceChildren(...[h("h2", {id: "waiting-title"}, "Waiting for " + (w.kind === "input" ? "your answer" : w.kind)),
      w.text ? h("p", {class: "text"}, w.text) : null,
      w.kind === "credential" ? h("p", {class: "meta"}, "Answer with the credential: the server keeps it sealed, the task gets a reference; it is never shown again.") : null,
      act].filter(Boolean));
  }

  // follow subscribes to the task while it works, to show its live answer
  // and to read its timeline as soon as it changes.
  function follow() {
    const s = head.state;
    const working = s === "TASK_STATE_WORKING" || s === "TASK_STATE_SUBMITTED";
    if (!working || stream || stopped) return;
    stream = new AbortController();
    const mine = stream;
    api.subscribe(agent, id, onEvent, mine.signal).catch(() => {}).finally(() => {
      if (stream === mine) stream = null;
      liveItem.setAttribute("aria-busy", "false");
      refreshSoon();
    });
  }

  function onEvent(ev) {
    const a = ev.artifactUpdate;
    const meta = a && ((a.metadata && a.metadata[LIVE_KEY]) || (a.artifact && a.artifact.metadata && a.artifact.metadata[LIVE_KEY]));
    if (a && meta && !meta.relayed) {
      const key = a.artifact.artifactId;
      const text = (a.artifact.parts || []).map(p => p.text || "").join("");
      live.set(key, (a.append ? live.get(key) || "" : "") + text);
      showLive(!a.lastChunk);
      return;
    }
    if (ev.statusUpdate || ev.artifactUpdate || ev.task) refreshSoon();
  }

  function showLive(busyNow) {
    const text = [...live.values()].join("\n\n");
    liveItem.hidden = !text;
    liveItem.setAttribute("aria-busy", busyNow ? "true" : "false");
    liveItem.replaceChildren(h("div", {class: "entry-head"}, h("span", {class: "kind"}, "Live answer"), h("span", {class: "meta"}, busyNow ? "being written…" : "done")),
      h("div", {class: "text"}, text));
    if (!busyNow) setTimeout(() => { live = new Map(); liveItem.hidden = true; refreshSoon(); }, 1500);
  }

  // replyForm sends the user's answer: text, JSON data and a file, each a
  // part of one message to the task (SendMessage with taskId and contextId).
  function replyForm() {
    const text = h("textarea", {id: "reply-text", rows: 3, "aria-describedby": "reply-help"});
    const data = h("textarea", {id: "reply-data", rows: 2, spellcheck: "false", placeholder: '{"destination": "Lisbon"}'});
    const file = h("input", {id: "reply-file", type: "file"});
    const error = h("div", {class: "error", role: "alert"});
    const send = h("button", {type: "submit", class: "primary", id: "reply-send"}, "Send");
    const form = h("form", {class: "reply", id: "reply-form", "aria-labelledby": "reply-title"},
      h("label", {}, "Text", text),
      h("details", {}, h("summary", {}, "Data and a file"),
        h("div", {class: "row"}, h("label", {style: "flex:1"}, "Data (JSON, optional)", data), h("label", {}, "File (optional)", file))),
      h("div", {class: "row"}, send, h("span", {id: "reply-help", class: "help"}, "Sent as your message to this task (Ctrl+Enter).")), error);
    // Ctrl+Enter (⌘+Enter) sends from any field of the form.
    form.addEventListener("keydown", ev => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); form.requestSubmit(); }
    });
    const panel = h("section", {class: "panel", id: "reply-panel", "aria-labelledby": "reply-title", hidden: true},
      h("h2", {id: "reply-title"}, "Reply"), form);
    form.addEventListener("submit", async ev => {
      ev.preventDefault();
      error.textContent = "";
      const parts = [];
      if (text.value.trim()) parts.push({text: text.value});
      if (data.value.trim()) {
        try { parts.push({data: JSON.parse(data.value), mediaType: "application/json"}); } catch (err) { error.textContent = "The data is not JSON: " + err.message; data.focus(); return; }
      }
      if (file.files.length) {
        const f = file.files[0];
        parts.push({raw: await readFileBase64(f), filename: f.name, mediaType: f.type || "application/octet-stream"});
      }
      if (!parts.length) { error.textContent = "Write something, or give data or a file."; text.focus(); return; }
      send.disabled = true;
      try {
        await api.sendMessage(agent, parts, {taskId: id, contextId: head && head.contextId});
        text.value = data.value = "";
        file.value = "";
        announce("Sent.");
        refreshSoon();
      } catch (err) {
        error.textContent = err.message;
      } finally {
        send.disabled = false;
      }
    });
    return {
      panel,
      show(open, w) {
        panel.hidden = !open;
        const label = w && (w.kind === "input" || w.kind === "credential") ? "Answer: " + (w.text || "") : "Reply";
        if (panel.querySelector("h2").textContent !== label) panel.querySelector("h2").textContent = label;
        text.setAttribute("aria-label", label);
        text.placeholder = w && w.kind === "credential" ? "the credential (kept sealed, never shown)" : "";
      },
    };
  }

  load(false);
  const timer = setInterval(() => {
    if (document.hidden || stopped || !head) return;
    const every = terminal(head.state) ? ENDED_REFRESH_MS : REFRESH_MS;
    if (Date.now() - lastRefresh >= every - 100) load(false);
  }, 1000);
  return () => {
    stopped = true;
    clearInterval(timer);
    clearTimeout(soon);
    if (stream) stream.abort();
  };
}

