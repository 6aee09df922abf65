// The console's one way to the server: the API's own routes, with the
// credential the user gave this tab. Nothing here knows more than a client
// of the API does.

const meta = document.querySelector('meta[name="a2aflow-console"]').dataset;

// server says how the server authenticates, as the page was rendered.
export const server = {
  auth: meta.auth === "true",
  apiKeyHeader: meta.apiKeyHeader || "",
  bearer: meta.bearer === "true",
  approverHeader: meta.approverHeader || "X-Approver",
};

// The inbox keeps its API key under the same name: one sign-in serves both.
const KEY = "a2aflow.apikey", TOKEN = "a2aflow.token", APPROVER = "a2aflow.approver";

export const credential = {
  get kind() { return sessionStorage.getItem(TOKEN) ? "bearer" : "apikey"; },
  get present() { return !!(sessionStorage.getItem(KEY) || sessionStorage.getItem(TOKEN)); },
  set(kind, secret) {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(TOKEN);
    if (secret) sessionStorage.setItem(kind === "bearer" ? TOKEN : KEY, secret);
  },
  clear() { this.set("", ""); },
  get approver() { return localStorage.getItem(APPROVER) || ""; },
  set approver(name) { localStorage.setItem(APPROVER, name); },
};

// headers are what every request carries: the A2A version and the
// credential, in the header the server reads; with authentication off, the
// approver's name.
export function headers(extra = {}) {
  const h = {"A2A-Version": "1.0", ...extra};
  const key = sessionStorage.getItem(KEY), token = sessionStorage.getItem(TOKEN);
  if (key && server.apiKeyHeader) h[server.apiKeyHeader] = key;
  else if (token) h["Authorization"] = "Bearer " + token;
  if (!server.auth && credential.approver) h[server.approverHeader] = credential.approver;
  return h;
}

// APIError is an answer other than 2xx: its status and the server's words.
export class APIError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
  get notFound() { return this.status === 404; }
  get unauthenticated() { return this.status === 401; }
}

// errorText reads the error of an answer in any of the API's shapes: a
// google.rpc.Status ({"error": {"message"}}), the approvals API's
// {"error": "..."}, or plain text.
function errorText(body, text, status) {
  const e = body && body.error;
  if (typeof e === "string") return e;
  if (e && e.message) return e.message;
  return (text || "").trim().slice(0, 300) || "HTTP " + status;
}

// call sends a request and returns its JSON answer, or throws an APIError.
export async function call(method, path, body, {signal, extraHeaders} = {}) {
  const init = {method, headers: headers(extraHeaders), signal};
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!resp.ok) throw new APIError(resp.status, errorText(data, text, resp.status), data);
  return data;
}

// agentPath is an agent's endpoint.
export const agentPath = name => "/agents/" + encodeURIComponent(name);
// taskPath is a task's HTTP+JSON path under its agent's endpoint.
export const taskPath = (agent, id) => agentPath(agent) + "/tasks/" + encodeURIComponent(id);

// listAgents answers GET /agents: [{name, description}].
export async function listAgents() {
  const a = await call("GET", "/agents");
  return (a && a.agents) || [];
}

// listTasks is A2A 1.0 ListTasks over HTTP+JSON, without history.
export function listTasks(agent, {contextId, status, pageSize, pageToken} = {}, signal) {
  const q = new URLSearchParams({historyLength: "0"});
  if (contextId) q.set("contextId", contextId);
  if (status) q.set("status", status);
  if (pageSize) q.set("pageSize", String(pageSize));
  if (pageToken) q.set("pageToken", pageToken);
  return call("GET", agentPath(agent) + "/tasks?" + q, undefined, {signal});
}

// taskList reads a page of the task list of every agent the caller may use
// (GET /task-list): one row per task with its summary, state, what it waits
// for, cost and age, from one visibility query.
export function taskList(filter = {}, signal) {
  const q = new URLSearchParams();
  for (const k of ["agent", "state", "context", "owner", "schedule", "forkOf", "q", "pageSize", "pageToken"]) {
    if (filter[k]) q.set(k, String(filter[k]));
  }
  const qs = q.toString();
  return call("GET", "/task-list" + (qs ? "?" + qs : ""), undefined, {signal});
}

// listApprovals reads the pending approvals the caller may read (what
// /inbox shows).
export async function listApprovals(signal) {
  const a = await call("GET", "/approvals", undefined, {signal});
  return (a && a.approvals) || [];
}

// timeline reads a page of a task's timeline (oldest first).
export function timeline(agent, id, {pageSize, pageToken} = {}, signal) {
  const q = new URLSearchParams();
  if (pageSize) q.set("pageSize", String(pageSize));
  if (pageToken) q.set("pageToken", pageToken);
  const qs = q.toString();
  return call("GET", taskPath(agent, id) + "/timeline" + (qs ? "?" + qs : ""), undefined, {signal});
}

// getTask is A2A GetTask.
export function getTask(agent, id, historyLength) {
  const q = historyLength === undefined ? "" : "?historyLength=" + historyLength;
  return call("GET", taskPath(agent, id) + q);
}

// newID returns a random message ID.
export function newID() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map(x => x.toString(16).padStart(2, "0")).join("");
}

// sendMessage is A2A SendMessage: a user message to a task (taskId and
// contextId) or a new task (neither), answered at once.
export function sendMessage(agent, parts, {taskId, contextId} = {}) {
  const message = {messageId: newID(), role: "ROLE_USER", parts};
  if (taskId) message.taskId = taskId;
  if (contextId) message.contextId = contextId;
  return call("POST", agentPath(agent) + "/message:send", {message, configuration: {returnImmediately: true}});
}

export const cancelTask = (agent, id) => call("POST", taskPath(agent, id) + ":cancel", {});
export const forkTask = (agent, id, atMessage) => call("POST", taskPath(agent, id) + ":fork", {atMessage});
export const retryTask = (agent, id) => call("POST", taskPath(agent, id) + ":retry", {});

// getApproval reads an approval (its request: the action, what may be
// edited, the grant it offers).
export const getApproval = id => call("GET", "/approvals/" + encodeURIComponent(id));

// decide decides an approval through its decision route, recorded as made
// in the console.
export function decide(id, {approved, comment, args, grant}) {
  const body = {approved, comment: comment || ""};
  if (args !== undefined) body.arguments = args;
  if (grant) body.grant = true;
  return call("POST", "/approvals/" + encodeURIComponent(id) + "/decision", body, {extraHeaders: {"X-A2Aflow-Via": "console"}});
}

// completeWaitpoint completes a waitpoint of the caller's own task: its
// owner reads the token from GET /waitpoints/{id}, then posts the payload.
export async function completeWaitpoint(id, payload) {
  const w = await call("GET", "/waitpoints/" + encodeURIComponent(id));
  return call("POST", "/waitpoints/" + encodeURIComponent(id), {token: w.token || "", payload});
}

// subscribe follows a task's events (A2A SubscribeToTask over HTTP+JSON,
// server-sent events) and calls onEvent with each StreamResponse until the
// stream ends or signal aborts it.
export async function subscribe(agent, id, onEvent, signal) {
  const resp = await fetch(taskPath(agent, id) + ":subscribe", {
    method: "POST", headers: headers({"Accept": "text/event-stream"}), signal,
  });
  if (!resp.ok || !resp.body) {
    const text = await resp.text();
    let data = null;
    try { data = JSON.parse(text); } catch { /* not JSON */ }
    throw new APIError(resp.status, errorText(data, text, resp.status), data);
  }
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    buf += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const data = block.split("\n").filter(l => l.startsWith("data:")).map(l => l.slice(5).replace(/^ /, "")).join("\n");
      if (!data) continue;
      let event;
      try { event = JSON.parse(data); } catch { continue; }
      onEvent(event);
    }
  }
}
