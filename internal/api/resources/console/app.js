// The a2aflow console: one page, hash routes.
//
//   #/tasks?agent=&state=&owner=&schedule=&context=&q=   the task list (tasks.js)
//   #/task/{agent}/{id}                   a task: its timeline and what to do (task.js)
//   #/approvals                           the pending approvals, linked to their tasks (approvals.js)
//   #/policies?scope=                     the approval policies: in force, edit, validate, diff, history (policies.js)
//
// Each view is mounted into <main> and returns a function that stops it
// (its timers and streams) when the route changes.

import {server, credential} from "./api.js";
import {announce} from "./util.js";
import * as tasks from "./tasks.js";
import * as task from "./task.js";
import * as approvals from "./approvals.js";
import * as policies from "./policies.js";

const main = document.getElementById("main");
let stop = () => {};

// route parses the location's hash.
function route() {
  const hash = location.hash.replace(/^#/, "") || "/tasks";
  const [path, query] = hash.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return {name: parts[0] || "tasks", args: parts.slice(1), params: new URLSearchParams(query || "")};
}

function render() {
  stop();
  main.replaceChildren();
  const r = route();
  for (const a of document.querySelectorAll("header nav a[data-nav]")) {
    if (a.dataset.nav === r.name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (r.name === "task" && r.args.length >= 2) {
    stop = task.mount(main, r.args[0], r.args[1]);
  } else if (r.name === "approvals") {
    stop = approvals.mount(main);
  } else if (r.name === "policies") {
    stop = policies.mount(main, r.params);
  } else {
    stop = tasks.mount(main, r.params);
  }
}

// The credentials form: an API key or a bearer token with authentication
// on, kept in this tab's session storage; the approver's name without.
function setUpCredentials() {
  const form = document.getElementById("credentials");
  if (server.auth) {
    const kind = document.getElementById("credential-kind");
    const secret = document.getElementById("credential");
    if (credential.present) {
      secret.placeholder = "signed in";
      if ([...kind.options].some(o => o.value === credential.kind)) kind.value = credential.kind;
    }
    form.addEventListener("submit", e => {
      e.preventDefault();
      credential.set(kind.value, secret.value.trim());
      secret.value = "";
      secret.placeholder = credential.present ? "signed in" : "";
      announce(credential.present ? "Signed in." : "No credential given.");
      render();
    });
    document.getElementById("sign-out").addEventListener("click", () => {
      credential.clear();
      secret.placeholder = "";
      announce("Credential forgotten.");
      render();
    });
  } else {
    const me = document.getElementById("approver");
    me.value = credential.approver;
    form.addEventListener("submit", e => {
      e.preventDefault();
      credential.approver = me.value.trim();
      announce("You decide as " + (credential.approver || "the default approver") + ".");
    });
    me.addEventListener("change", () => { credential.approver = me.value.trim(); });
  }
}

setUpCredentials();
window.addEventListener("hashchange", () => {
  render();
  main.focus({preventScroll: true});
});
render();
