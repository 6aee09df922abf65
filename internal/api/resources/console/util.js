// Small helpers of the console's views: building elements (text is always
// set as text, never parsed as HTML), states, times, money, JSON, diffs
// and message parts.

// h builds an element: h("a", {href: "#", class: "x"}, "text", child...).
// Attributes starting with "on" are listeners; null and false are left out.
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
    else if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k === "value" && "value" in e) e.value = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// reconcile makes items the children of parent, in order, moving only
// what is out of place: an element that stays where it was is not
// detached, so it keeps its focus and what is typed into it.
export function reconcile(parent, items) {
  const keep = new Set(items);
  for (const c of [...parent.children]) if (!keep.has(c)) c.remove();
  items.forEach((item, i) => {
    const at = parent.children[i];
    if (at !== item) parent.insertBefore(item, at || null);
  });
}

// announce tells screen readers (and the status line) what just happened.
export function announce(text) {
  const a = document.getElementById("announce");
  if (!a) return;
  a.textContent = "";
  setTimeout(() => { a.textContent = text; }, 30);
}

// The A2A 1.0 task states, as the API names them, with a short label.
export const STATES = [
  ["TASK_STATE_SUBMITTED", "submitted"],
  ["TASK_STATE_WORKING", "working"],
  ["TASK_STATE_INPUT_REQUIRED", "input-required"],
  ["TASK_STATE_AUTH_REQUIRED", "auth-required"],
  ["TASK_STATE_COMPLETED", "completed"],
  ["TASK_STATE_FAILED", "failed"],
  ["TASK_STATE_CANCELED", "canceled"],
  ["TASK_STATE_REJECTED", "rejected"],
];
const stateLabels = new Map(STATES);

// stateLabel is the short name of a state ("input-required").
export const stateLabel = s => stateLabels.get(s) || String(s || "unknown").replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
export const terminal = s => ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"].includes(s);
export const badge = s => h("span", {class: "state " + stateLabel(s)}, stateLabel(s));

// ago is how long before now t was, shortly ("3 min").
export function ago(t, now = Date.now()) {
  if (!t) return "";
  const s = Math.max(0, Math.round((now - new Date(t).getTime()) / 1000));
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  if (s < 86400) return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  return Math.floor(s / 86400) + " d";
}

// when is a time as the reader's locale writes it.
export const when = t => (t ? new Date(t).toLocaleString() : "");
export const timeEl = t => (t ? h("time", {datetime: t, title: when(t)}, new Date(t).toLocaleTimeString()) : "");

// money is a cost in US dollars; "" for none.
export function money(usd) {
  if (usd === undefined || usd === null || usd === "") return "";
  const n = Number(usd);
  if (!isFinite(n)) return "";
  return "$" + (n === 0 ? "0" : n < 0.01 ? n.toFixed(4) : n.toFixed(2));
}

// pretty is a value as indented JSON (a string as it is).
export function pretty(v) {
  if (typeof v === "string") {
    try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; }
  }
  return JSON.stringify(v, null, 2);
}

// lineDiff compares two texts by lines (longest common subsequence) and
// returns [op, line] pairs: " " kept, "-" removed, "+" added.
export function lineDiff(a, b) {
  const x = a.split("\n"), y = b.split("\n");
  const n = x.length, m = y.length;
  const L = Array.from({length: n + 1}, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push([" ", x[i]]); i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) out.push(["-", x[i++]]);
    else out.push(["+", y[j++]]);
  }
  while (i < n) out.push(["-", x[i++]]);
  while (j < m) out.push(["+", y[j++]]);
  return out;
}

// canonical is a JSON value with its objects' keys sorted, so that a diff
// shows changed values, not a different order.
function canonical(v) {
  if (typeof v === "string") {
    try { v = JSON.parse(v); } catch { return v; }
  }
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map(k => [k, canonical(v[k])]));
  return v;
}

// diffView shows what an approver changed: the proposed arguments against
// the approved ones, line by line, keys in order.
export function diffView(before, after, label) {
  const rows = lineDiff(pretty(canonical(before)), pretty(canonical(after))).map(([op, line]) =>
    op === "+" ? h("ins", {}, h("span", {class: "visually-hidden"}, "added: "), "+ " + line)
      : op === "-" ? h("del", {}, h("span", {class: "visually-hidden"}, "removed: "), "- " + line)
        : h("span", {}, "  " + line));
  return h("div", {class: "diff", role: "group", "aria-label": label}, rows);
}

// base64Bytes decodes standard or URL-safe base64.
function base64Bytes(s) {
  const bin = atob(String(s).replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// safeURL returns u when it is an http(s) address, else "": a message's
// file part or a remote agent could name a javascript: URL.
export function safeURL(u) {
  try {
    const url = new URL(u, location.href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : "";
  } catch {
    return "";
  }
}

// fileLink is a download link for a file part: its bytes (raw) as a blob,
// or its URL.
export function fileLink(part) {
  const name = part.filename || "file";
  const type = part.mediaType || "application/octet-stream";
  if (part.url) {
    const href = safeURL(part.url);
    return href ? h("a", {href, download: name, rel: "noopener noreferrer", target: "_blank"}, "⤓ " + name) : h("code", {}, part.url);
  }
  let href = "#";
  try { href = URL.createObjectURL(new Blob([base64Bytes(part.raw)], {type})); } catch { /* bad base64 */ }
  return h("a", {href, download: name, class: "file"}, "⤓ Download " + name, h("span", {class: "meta"}, " (" + type + ")"));
}

// partsView shows a message's or an artifact's parts: text as text, data
// as JSON, files as download links.
export function partsView(parts) {
  return (parts || []).map(p => {
    if (p.text !== undefined) return h("div", {class: "text"}, p.text);
    if (p.data !== undefined) return h("pre", {class: "data"}, pretty(p.data));
    if (p.raw !== undefined || p.url !== undefined) return h("div", {class: "filepart"}, fileLink(p));
    return h("pre", {}, pretty(p));
  });
}

// textOf is the text of a message's text parts.
export const textOf = m => ((m && m.parts) || []).filter(p => p.text !== undefined).map(p => p.text).join("\n");

// readFileBase64 reads a File as base64, for a raw file part.
export function readFileBase64(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ""));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}
