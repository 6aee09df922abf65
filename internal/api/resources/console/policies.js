// The approval policies (operators and tenants' admins only): the scopes
// in force with their latest version, and an editor for one scope: its
// text, checked with Validate (POST /policies/validate: each problem with
// its line), compared with the text in force (Diff), saved as a new
// version with a reason (PUT /policies/{scope}); the scope's history lists
// every version, and Load puts one's text into the editor.

import * as api from "./api.js";
import {h, when, announce, lineDiff} from "./util.js";

const scopePath = scope => "/policies/" + scope.split("/").map(encodeURIComponent).join("/");

// mount shows the policies in main; it returns the function that stops the
// view (nothing runs in the background).
export function mount(main, params) {
  let inForce = "", stopped = false;
  const message = h("div", {id: "policies-message", role: "status"});
  const scopes = h("ul", {class: "scopes", id: "policy-scopes", "aria-label": "Scopes in force"});
  const scope = h("input", {id: "policy-scope", size: 28, placeholder: "agent/payables", autocomplete: "off"});
  const text = h("textarea", {id: "policy-text", rows: 14, cols: 90, spellcheck: "false", class: "code"});
  const reason = h("input", {id: "policy-reason", size: 50, autocomplete: "off"});
  const result = h("div", {id: "policy-result", role: "status", "aria-live": "polite"});
  const diff = h("div", {id: "policy-diff-view"});
  const history = h("ol", {id: "policy-history", class: "history", "aria-label": "Versions of the scope"});
  const form = h("form", {id: "policy-editor", class: "panel", "aria-label": "Edit a scope's policies"},
    h("p", {}, h("label", {}, "Scope ", scope), " ", h("button", {type: "button", id: "policy-open"}, "Open")),
    h("p", {}, h("label", {for: "policy-text"}, "Cedar policies")), text,
    h("p", {}, h("label", {}, "Reason ", reason)),
    h("p", {class: "actions"},
      h("button", {type: "button", id: "policy-validate"}, "Validate"), " ",
      h("button", {type: "button", id: "policy-diff"}, "Diff"), " ",
      h("button", {type: "submit", id: "policy-set"}, "Save as a new version")),
    result, diff);
  main.append(h("h1", {}, "Policies"),
    h("p", {class: "meta"}, "The approval policies (Cedar) that decide which tool calls and steps need people, each change a new version. " +
      "Operators change every scope, a tenant's admins their tenant's."),
    message, h("h2", {}, "In force"), scopes, h("h2", {}, "Edit"), form, h("h2", {}, "History"), history);

  const fail = (where, e) => where.replaceChildren(h("p", {class: "error"}, e.unauthenticated
    ? "Sign in: the server wants an API key or a bearer token (" + e.message + ")." : e.message));

  async function listScopes() {
    try {
      const r = await api.call("GET", "/policies");
      scopes.replaceChildren(...(r.scopes.length ? r.scopes.map(p => h("li", {dataset: {scope: p.scope}},
        h("a", {href: "#/policies?scope=" + encodeURIComponent(p.scope), class: "scope-link"}, p.scope),
        ` version ${p.version}, by ${p.author || "?"} on ${when(p.createdAt)}`, p.reason ? ": " + p.reason : "")) : [h("li", {class: "empty"}, "No policies are in force.")]));
      message.replaceChildren(h("p", {class: "meta"}, `Latest version: ${r.version}.`));
    } catch (e) {
      fail(message, e);
    }
  }

  // open loads scope s: its text in force (empty when none) and history.
  async function open(s) {
    scope.value = s;
    result.replaceChildren();
    diff.replaceChildren();
    try {
      try {
        inForce = (await api.call("GET", scopePath(s))).text;
      } catch (e) {
        if (!e.notFound) throw e;
        inForce = "";
      }
      if (stopped) return;
      text.value = inForce;
      const r = await api.call("GET", "/policy-versions?scope=" + encodeURIComponent(s));
      history.replaceChildren(...(r.versions || []).map(v => h("li", {dataset: {version: v.version}},
        `version ${v.version} by ${v.author || "?"} on ${when(v.createdAt)}${v.reason ? ": " + v.reason : ""}${v.text ? "" : " (removed)"} `,
        h("button", {type: "button", class: "load", "aria-label": "Load version " + v.version + " into the editor",
          onclick: () => { text.value = v.text; announce("Version " + v.version + " loaded; save it to restore it."); }}, "Load"))));
      if (!history.children.length) history.append(h("li", {class: "empty"}, "No version yet."));
    } catch (e) {
      fail(result, e);
    }
  }

  function showProblems(p) {
    result.replaceChildren(p.valid ? h("p", {class: "ok", id: "policy-valid"}, "Valid.")
      : h("ul", {class: "error", id: "policy-problems"}, (p.problems || []).map(x => h("li", {}, x.line ? `line ${x.line}: ${x.message}` : x.message)),
        p.error && !(p.problems || []).length ? h("li", {}, p.error) : ""));
  }

  async function validate() {
    try {
      showProblems(await api.call("POST", "/policies/validate", {scope: scope.value.trim(), text: text.value}));
    } catch (e) {
      fail(result, e);
    }
  }

  function showDiff() {
    const rows = lineDiff(inForce, text.value).map(([op, line]) =>
      op === "+" ? h("ins", {}, h("span", {class: "visually-hidden"}, "added: "), "+ " + line)
        : op === "-" ? h("del", {}, h("span", {class: "visually-hidden"}, "removed: "), "- " + line)
          : h("span", {}, "  " + line));
    diff.replaceChildren(h("div", {class: "diff", role: "group", "aria-label": "The text in force against the edited text"}, rows));
  }

  async function save(e) {
    e.preventDefault();
    const s = scope.value.trim();
    try {
      const v = await api.call("PUT", scopePath(s), {text: text.value, reason: reason.value});
      result.replaceChildren(h("p", {class: "ok", id: "policy-saved"}, `${s}: version ${v.version}`));
      announce(`${s}: version ${v.version} saved.`);
      reason.value = "";
      await listScopes();
      await open(s);
      result.replaceChildren(h("p", {class: "ok", id: "policy-saved"}, `${s}: version ${v.version}`));
    } catch (err) {
      if (err.status === 400 && err.body && err.body.problems) showProblems(err.body);
      else fail(result, err);
    }
  }

  form.querySelector("#policy-open").addEventListener("click", () => open(scope.value.trim()));
  form.querySelector("#policy-validate").addEventListener("click", validate);
  form.querySelector("#policy-diff").addEventListener("click", showDiff);
  form.addEventListener("submit", save);
  listScopes();
  if (params.get("scope")) open(params.get("scope"));
  return () => { stopped = true; };
}
