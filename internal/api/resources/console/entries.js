// The entries of a task's timeline, one view per kind, and the forms that
// act on an entry: a pending approval's decision, a pending waitpoint's
// completion, a fork at a message.

import * as api from "./api.js";
import {h, badge, timeEl, when, money, pretty, diffView, partsView, announce, safeURL} from "./util.js";

const KIND_LABELS = {
  message: "Message", status: "Status", artifact: "Artifact", model_call: "Model call", tool_call: "Tool call",
  approval: "Approval", waitpoint: "Waitpoint", credential_request: "Credential request", delegation: "Delegation",
  continue_as_new: "Continued as new", fork: "Fork",
};

// entryView renders entry e of the task in ctx ({agent, taskId, onChanged,
// onForked}); it returns an <li>.
export function entryView(e, ctx) {
  const body = (VIEWS[e.kind] || unknownView)(e, ctx);
  const role = e.kind === "message" ? roleOf(e.message) : "";
  const tools = [];
  if (e.kind === "message" && e.message && e.message.messageIndex) tools.push(forkButton(e.message.messageIndex, ctx));
  if (safeURL(e.temporalUrl)) tools.push(h("a", {href: safeURL(e.temporalUrl), target: "_blank", rel: "noopener", class: "temporal"}, "Temporal UI", h("span", {class: "visually-hidden"}, " (opens a new tab)")));
  const label = e.kind === "message" ? (role === "user" ? "User" : "Agent") + " message #" + (e.message?.messageIndex ?? "?") : KIND_LABELS[e.kind] || e.kind;
  return h("li", {class: [e.kind, role].filter(Boolean).join(" "), id: "entry-" + e.seq, dataset: {seq: e.seq, kind: e.kind},
    "aria-label": label},
  h("div", {class: "entry-head"}, h("span", {class: "kind"}, label), timeEl(e.time), h("span", {class: "tools"}, tools)),
  body);
}

const roleOf = m => (m && m.role === "ROLE_USER" ? "user" : "agent");

const VIEWS = {
  message: e => partsView(e.message && e.message.parts),
  status: e => h("div", {}, badge(e.status?.state), e.status?.text ? h("div", {class: "text"}, e.status.text) : null),
  artifact: e => h("div", {}, h("div", {class: "meta"}, "artifact ", h("strong", {}, e.artifact?.name || e.artifact?.artifactId || "")),
    partsView(e.artifact?.parts)),
  model_call: e => {
    const m = e.model || {};
    const facts = [
      m.model && (m.provider ? `${m.model} (${m.provider})` : m.model),
      m.turn ? "turn " + m.turn : null,
      `${m.inputTokens ?? 0} tokens in, ${m.outputTokens ?? 0} out`,
      m.costUsd !== undefined ? money(m.costUsd) : null,
      m.durationMs ? (m.durationMs / 1000).toFixed(2) + " s" : null,
    ].filter(Boolean);
    return h("div", {}, h("div", {class: "text"}, facts.join(" · ")), m.error ? h("div", {class: "error"}, m.error) : null);
  },
  tool_call: toolView,
  approval: approvalView,
  waitpoint: waitpointView,
  credential_request: e => {
    const c = e.credential || {};
    return h("div", {class: "text"}, `${c.name || "a credential"}${c.authType ? " (" + c.authType + ")" : ""}${c.agent ? " for " + c.agent : ""}: ${c.state || ""}`,
      h("div", {class: "meta"}, "The secret is never shown."));
  },
  delegation: delegationView,
  continue_as_new: e => h("div", {class: "meta"}, "The task's workflow continued in a new run" +
    (e.continueAsNew?.newRunId ? " (" + e.continueAsNew.newRunId + ")" : "") + ": its history starts again, the task goes on."),
  fork: forkView,
};

function unknownView(e) { return h("pre", {}, pretty(e)); }

function toolView(e) {
  const t = e.tool || {};
  const parts = [h("div", {class: "text"}, h("code", {}, t.name || "tool"))];
  if (t.arguments !== undefined) parts.push(h("div", {class: "meta"}, "arguments"), h("pre", {class: "arguments"}, pretty(t.arguments)));
  if (t.editedArguments !== undefined) {
    parts.push(h("div", {class: "meta"}, "the approver edited the arguments:"),
      diffView(t.arguments ?? {}, t.editedArguments, "Edited arguments: the model's, then the approved ones"));
  }
  if (t.approvalId) parts.push(h("div", {class: "meta"}, "gated: ", h("a", {href: "#", dataset: {approval: t.approvalId}, onclick: jumpToApproval}, "approval " + t.approvalId)));
  if (t.result !== undefined) parts.push(h("div", {class: "meta"}, "result"), h("pre", {class: "result"}, pretty(t.result)));
  if (t.error) parts.push(h("div", {class: "error"}, t.error));
  return h("div", {}, parts);
}

// jumpToApproval moves the focus to the approval an entry names.
function jumpToApproval(ev) {
  ev.preventDefault();
  const target = document.querySelector(`li.approval[data-approval="${CSS.escape(ev.currentTarget.dataset.approval)}"]`);
  if (target) { target.setAttribute("tabindex", "-1"); target.focus(); }
}

function approvalView(e, ctx) {
  const a = e.approval || {};
  const facts = [
    a.groups && a.groups.length ? "groups " + a.groups.join(", ") : null,
    a.quorum > 1 ? "quorum " + a.quorum : null,
    a.deadline ? "deadline " + when(a.deadline) : null,
  ].filter(Boolean);
  const decisions = (a.decisions || []).map(d => h("li", {}, `${d.decision} by ${d.by} at ${when(d.at)}`, d.comment ? ` — “${d.comment}”` : ""));
  const view = h("div", {}, h("div", {class: "text"}, h("strong", {}, a.title || a.id), " ", h("span", {class: "state " + (a.state || "")}, a.state || "")),
    h("div", {class: "meta"}, [a.id, ...facts].join(" · ")),
    decisions.length ? h("ul", {class: "decisions"}, decisions) : null,
    a.state === "pending" ? decisionForm(a, ctx) : null);
  return view;
}

// decisionForm decides a pending approval: approve or reject with a
// comment, with edited arguments when the request takes them, and the
// grant for the rest of the task when it offers one (read from GET
// /approvals/{id}). The approvals view (approvals.js) uses it too.
export function decisionForm(a, ctx) {
  const comment = h("textarea", {rows: 2, class: "comment", "aria-label": "Comment on your decision"});
  const error = h("div", {class: "error", role: "alert"});
  const extra = h("div", {class: "extra"});
  const approve = h("button", {type: "button", class: "approve"}, "Approve");
  const reject = h("button", {type: "button", class: "reject"}, "Reject");
  const form = h("div", {class: "decide", role: "group", "aria-label": "Decide approval " + (a.title || a.id), dataset: {approval: a.id}},
    extra, h("label", {}, "Comment", comment), h("div", {class: "actions"}, approve, reject), error);
  let args = null, proposed = null, grant = null;
  api.getApproval(a.id).then(full => {
    const req = full.request || {};
    if (req.details) extra.append(h("p", {class: "text"}, req.details));
    const action = req.action;
    if (action) {
      proposed = action.arguments;
      if (req.editSchema && proposed !== undefined) {
        args = h("textarea", {class: "arguments", rows: Math.min(12, pretty(proposed).split("\n").length + 1), spellcheck: "false"});
        args.value = pretty(proposed);
        const diff = h("div", {class: "arguments-diff", "aria-live": "polite"});
        args.addEventListener("input", () => {
          let edited;
          try { edited = JSON.parse(args.value); } catch { diff.replaceChildren(h("span", {class: "error"}, "not JSON yet")); return; }
          diff.replaceChildren(JSON.stringify(edited) === JSON.stringify(proposed) ? "" : diffView(proposed, edited, "Your edit of the arguments"));
        });
        extra.append(h("label", {}, "Arguments to approve (edit them to approve others)", args), diff);
      } else {
        extra.append(h("div", {class: "meta"}, "proposed"), h("pre", {class: "action"}, pretty(action)));
      }
    }
    if (req.grantKey) {
      grant = h("input", {type: "checkbox", class: "grant"});
      extra.append(h("label", {class: "check"}, grant, "also approve ", h("code", {}, req.grantKey), " for the rest of this task"));
    }
  }, err => { extra.append(h("div", {class: "meta"}, "Cannot read the request: " + err.message)); });

  async function send(approved) {
    error.textContent = "";
    const body = {approved, comment: comment.value};
    if (approved && args && proposed !== undefined) {
      let edited;
      try { edited = JSON.parse(args.value); } catch (err) { error.textContent = "The arguments are not JSON: " + err.message; args.focus(); return; }
      if (JSON.stringify(edited) !== JSON.stringify(proposed)) body.args = edited;
    }
    if (approved && grant && grant.checked) body.grant = true;
    approve.disabled = reject.disabled = true;
    try {
      await api.decide(a.id, body);
      announce((approved ? "Approved: " : "Rejected: ") + (a.title || a.id));
      ctx.onChanged();
    } catch (err) {
      error.textContent = err.message;
      approve.disabled = reject.disabled = false;
    }
  }
  approve.addEventListener("click", () => send(true));
  reject.addEventListener("click", () => send(false));
  return form;
}

function waitpointView(e, ctx) {
  const w = e.waitpoint || {};
  const line = [w.name, w.id, w.state, w.completedAt ? "completed " + when(w.completedAt) : null, w.completedBy ? "by " + w.completedBy : null].filter(Boolean).join(" · ");
  return h("div", {}, h("div", {class: "text"}, line), w.state === "pending" ? waitpointForm(w, ctx) : null);
}

// waitpointForm completes a pending waitpoint with a JSON payload, as its
// owner (POST /waitpoints/{id} with the token GET /waitpoints/{id} gives
// the owner).
function waitpointForm(w, ctx) {
  const payload = h("textarea", {rows: 3, class: "payload", spellcheck: "false", placeholder: '{"ticket": "CHG-1"}'});
  const error = h("div", {class: "error", role: "alert"});
  const button = h("button", {type: "submit", class: "primary"}, "Complete the waitpoint");
  const form = h("form", {class: "decide", "aria-label": "Complete waitpoint " + (w.name || w.id)},
    h("label", {}, "Payload (JSON)", payload), h("div", {class: "actions"}, button), error);
  form.addEventListener("submit", async ev => {
    ev.preventDefault();
    error.textContent = "";
    let value;
    try { value = JSON.parse(payload.value); } catch (err) { error.textContent = "The payload is not JSON: " + err.message; return; }
    button.disabled = true;
    try {
      await api.completeWaitpoint(w.id, value);
      announce("Waitpoint completed.");
      ctx.onChanged();
    } catch (err) {
      error.textContent = err.message;
      button.disabled = false;
    }
  });
  return form;
}

function delegationView(e) {
  const d = e.delegation || {};
  let remote = d.remoteTaskId ? h("span", {}, "remote task " + d.remoteTaskId) : null;
  // A remote a2aflow agent of this server: its task opens in the console.
  try {
    const u = new URL(d.agentUrl, location.href);
    const m = u.pathname.match(/^\/agents\/([^/]+)\/?$/);
    if (u.origin === location.origin && m && d.remoteTaskId) {
      remote = h("a", {href: "#/task/" + m[1] + "/" + encodeURIComponent(d.remoteTaskId)}, "remote task " + d.remoteTaskId);
    }
  } catch { /* not a URL */ }
  return h("div", {}, h("div", {class: "text"}, "to ", h("code", {}, d.agentUrl || "a remote agent")),
    remote ? h("div", {}, remote, d.remoteState ? [" ", badge(d.remoteState)] : null) : null,
    d.error ? h("div", {class: "error"}, d.error) : null);
}

function forkView(e, ctx) {
  const f = e.fork || {};
  const link = id => h("a", {href: "#/task/" + encodeURIComponent(ctx.agent) + "/" + encodeURIComponent(id)}, id);
  if (f.forkTaskId) return h("div", {class: "text"}, (f.retry ? "Retried as " : "Forked as "), link(f.forkTaskId), f.atMessage ? " at message " + f.atMessage : "");
  return h("div", {class: "text"}, f.retry ? "A retry of " : "A fork of ", link(f.fromTaskId || ""), f.atMessage ? " at its message " + f.atMessage : "");
}

// forkButton forks the task at message n and opens the fork.
function forkButton(n, ctx) {
  const b = h("button", {type: "button", class: "small fork", "aria-label": "Fork the task at message " + n, dataset: {at: n}}, "Fork here");
  b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      const t = await api.forkTask(ctx.agent, ctx.taskId, n);
      announce("Forked at message " + n + ": task " + t.id + ".");
      ctx.onForked(t);
    } catch (err) {
      ctx.onError("Cannot fork at message " + n + ": " + err.message);
      b.disabled = false;
    }
  });
  return b;
}
