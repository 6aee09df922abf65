// The approvals: the pending approvals the caller may read (GET
// /approvals, what /inbox shows), each with its decision form and linked
// to its task's timeline (which only the task's owner may read: an
// approver of another owner's task decides it here). Refreshed every few
// seconds.

import * as api from "./api.js";
import {h, timeEl, announce, reconcile} from "./util.js";
import {decisionForm} from "./entries.js";

const REFRESH_MS = 3000;

// mount shows the approvals in main; it returns the function that stops
// their refresh.
export function mount(main) {
  let stopped = false, busy = false, controller = null, count = -1;
  const list = h("ul", {class: "approvals", id: "approval-list", "aria-label": "Pending approvals"});
  const message = h("div", {id: "approvals-message", role: "status"});
  const updated = h("span", {class: "meta", id: "approvals-updated"});
  main.append(h("h1", {}, "Approvals"),
    h("p", {class: "meta"}, "The approvals waiting for you or your groups, and those of your own tasks, the oldest first. " +
      "Decide one here, or open its task (yours only) to read the conversation first. ", h("a", {href: "/inbox"}, "The inbox"), " shows the same."),
    h("div", {class: "listbar"}, updated), message, list);

  async function refresh() {
    if (busy || stopped) return;
    busy = true;
    controller = new AbortController();
    try {
      const approvals = await api.listApprovals(controller.signal);
      message.replaceChildren();
      updated.textContent = "updated " + new Date().toLocaleTimeString();
      render(approvals);
      if (count >= 0 && approvals.length !== count) announce(approvals.length + " approvals pending.");
      count = approvals.length;
    } catch (e) {
      if (e.name === "AbortError") return;
      list.replaceChildren();
      message.replaceChildren(h("p", {class: "error"}, e.unauthenticated
        ? "Sign in: the server wants an API key or a bearer token (" + e.message + ")."
        : "Cannot list the approvals: " + e.message));
    } finally {
      busy = false;
    }
  }

  // render keeps an unchanged item as the same element, so a focused link
  // keeps its focus across refreshes. The decision form shows the
// request's details.
  function render(approvals) {
    const old = new Map([...list.children].map(li => [li.dataset.approval, li]));
    const fresh = approvals.map(a => {
      const r = a.request || {};
      const sig = JSON.stringify([r.title, a.groups, a.deadline, (a.decisions || []).length, a.escalated]);
      const li = old.get(a.id);
      if (li && li.dataset.sig === sig) return li;
      const taskHref = "#/task/" + encodeURIComponent(a.agent) + "/" + encodeURIComponent(a.taskId);
      const titleID = "approval-title-" + a.id;
      const needed = r.required > 1 ? `${(a.decisions || []).filter(d => d.approved).length} of ${r.required} approvals` : "";
      return h("li", {class: "panel waiting", dataset: {approval: a.id, task: a.taskId, sig}, "aria-labelledby": titleID},
        h("h2", {id: titleID}, r.title || a.id),
        h("dl", {class: "facts"},
          h("dt", {}, "Task"), h("dd", {}, h("a", {class: "task-link", href: taskHref, "aria-label": "Open the task of " + (r.title || a.id)},
            a.agent + " · " + a.taskId)),
          h("dt", {}, "Groups"), h("dd", {}, (a.groups || r.groups || []).join(", ") + (a.escalated ? " (escalated)" : "")),
          needed ? [h("dt", {}, "Quorum"), h("dd", {}, needed)] : "",
          h("dt", {}, "Asked"), h("dd", {}, timeEl(a.created)),
          a.deadline ? [h("dt", {}, "Deadline"), h("dd", {}, timeEl(a.deadline))] : "",
          a.temporalUrl ? [h("dt", {}, "Run"), h("dd", {}, h("a", {href: a.temporalUrl, rel: "noopener"}, "in the Temporal UI"))] : ""),
        decisionForm({id: a.id, title: r.title}, {onChanged: refresh}));
    });
    reconcile(list, fresh);
    if (!fresh.length) list.replaceChildren(h("li", {class: "empty"}, "No approval is waiting."));
  }

  refresh();
  const timer = setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
    if (controller) controller.abort();
  };
}
