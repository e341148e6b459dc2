// The Jarvis console: the standard LangGraph API (threads, runs, streams, interrupts, store)
// behind the console's token, from plain modules with no build step and nothing from outside.

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
};
const SHOWN_CHARS = 4000;
const cut = (text) => (text.length > SHOWN_CHARS
  ? `${text.slice(0, SHOWN_CHARS)}\n… (${text.length} characters; the whole output is in the file the tool named)`
  : text);
const state = { info: null, assistants: [], thread: null, run: null, abort: null };

async function api(method, path, body) {
  const reply = await fetch(`/api${path}`, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!reply.ok) {
    const text = await reply.text();
    throw new Error(`${method} ${path}: ${reply.status} ${text.slice(0, 300)}`);
  }
  const type = reply.headers.get("content-type") || "";
  return type.includes("json") ? reply.json() : reply.text();
}

// The console's own JSON routes, beside the API server's.
async function consoleCall(path, body) {
  const reply = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  if (!reply.ok) throw new Error(`${path}: ${reply.status} ${(await reply.text()).slice(0, 300)}`);
  return reply.json();
}

// Server-sent events of a POST (EventSource cannot POST): yields {event, data}.
async function* stream(path, body, signal) {
  const reply = await fetch(`/api${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  if (!reply.ok) throw new Error(`${path}: ${reply.status} ${(await reply.text()).slice(0, 300)}`);
  const reader = reply.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
    }
  }
}

// ---- pages ----------------------------------------------------------------------------
function show(page) {
  document.querySelectorAll(".page").forEach((p) => p.classList.toggle("active", p.id === `page-${page}`));
  document.querySelectorAll("header nav button").forEach((b) => b.classList.toggle("active", b.dataset.page === page));
  if (page === "sessions") loadSessions();
  if (page === "memory") loadNamespaces().then(() => searchMemory());
  if (page === "graph") drawGraph();
}

// ---- chat -----------------------------------------------------------------------------
const log = (node) => { $("#chat-log").append(node); node.scrollIntoView({ block: "end" }); return node; };
const say = (text, kind) => log(el("div", { class: `msg ${kind}` }, text));

function assistantId(graphId) {
  const found = state.assistants.find((a) => a.graph_id === graphId);
  if (!found) throw new Error(`the API server has no graph ${graphId}`);
  return found.assistant_id;
}

function showToolCall(call) {
  if (call.id) toolNames[call.id] = call.name;
  const args = JSON.stringify(call.args ?? {});
  return log(el("details", { class: "tool", "data-call": call.id || "" },
    el("summary", {}, `⚙ ${call.name} ${args.length > 160 ? `${args.slice(0, 160)}…` : args}`)));
}

function showToolResult(message) {
  const node = document.querySelector(`details.tool[data-call="${CSS.escape(message.tool_call_id || "")}"]`)
    || showToolCall({ name: message.name, args: {}, id: message.tool_call_id });
  const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  if (message.status === "error") node.classList.add("error");
  node.append(el("pre", {}, cut(text)));
  node.querySelector("summary").append(message.status === "error" ? "  ✗" : "  ✓");
}

// A reply is shown once it is an answer that passed its check: while it is written, only
// how far it got; a draft the check sends back is one dim line, never its text.
const CHECK_NAME = "jarvis_answer_check";
const CHECK_NODES = ["review_answer", "check_answer"]; // they pass or send back an answer
let live = null; // the reply being written
let written = 0;
let cites = []; // the sources of the answer that passed: [{source, quote}]
const toolNames = {}; // call id -> tool, to name an answer's sources

function onMessageChunk([chunk, meta]) {
  if (meta?.langgraph_node !== "call_model" || typeof chunk?.content !== "string" || !chunk.content) return;
  live = live || say("", "draft live");
  written += chunk.content.length;
  live.textContent = `writing… ${written} characters`;
}

function dropLive() {
  if (live) live.remove();
  live = null;
  written = 0;
}

function showAnswer(text, sources) {
  const node = say(text || "(no answer)", "answer");
  if (text) showMarkdown(node, text).catch(() => {}); // else it stays the text it came as
  for (const cite of sources || []) {
    const quote = String(cite.quote ?? "");
    const shown = quote.length > 120 ? `${quote.slice(0, 120)}…` : quote;
    say(`↳ from ${toolNames[cite.source] || cite.source}: '${shown}'`, "source");
  }
}

// The server renders the answer's Markdown and keeps any HTML in it as text, so what the
// model wrote (or copied from a page it read) never runs here.
async function showMarkdown(node, text) {
  const { html } = await consoleCall("/console/markdown", { text });
  node.innerHTML = html;
  node.classList.add("markdown");
}

// The live line of a run: what it does now (from the events Jarvis writes to the stream),
// how long that has taken, and the whole run's time.
const progress = { what: "", step: 0, run: 0, timer: null };
const PROGRESS_OF = {
  task_started: () => "starting",
  before_model_call: (p) => (p.iteration ? `thinking… step ${p.iteration}` : "thinking…"),
  before_tool_call: (p) => `running ${p.name}`,
  after_tool_call: (p) => `ran ${p.name}`,
  before_summary: () => "summarizing the history",
  plan_updated: (p) => `running a plan of ${(p.steps || []).length} steps`,
  plan_step_finished: (p) => `plan step ${p.id} ${p.status}`,
  handoff: (p) => `handing over to ${p.to}`,
  chain_step_finished: (p) => `chain ${p.chain}: step ${p.step} ${p.status}`,
};
const elapsed = (since) => {
  const seconds = Math.floor((Date.now() - since) / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
};

function drawProgress() {
  $("#chat-progress").textContent = `${progress.what} · ${elapsed(progress.step)} · run ${elapsed(progress.run)}`;
}

function setProgress(what) {
  progress.what = what;
  progress.step = Date.now();
  drawProgress();
}

function startProgress() {
  progress.run = Date.now();
  setProgress("starting");
  progress.timer = setInterval(drawProgress, 1000);
  $("#chat-progress").hidden = false;
}

function stopProgress() {
  clearInterval(progress.timer);
  $("#chat-progress").hidden = true;
}

function onCustom(data) {
  const describe = PROGRESS_OF[data?.event];
  if (describe) setProgress(describe(data.payload || {}));
}

function onUpdate(update) {
  for (const [node, data] of Object.entries(update)) {
    if (node === "__interrupt__" || !data) continue;
    for (const message of data.messages || []) {
      if (message.type === "ai" && message.tool_calls?.length) {
        dropLive();
        message.tool_calls.forEach(showToolCall);
      } else if (message.type === "ai" && CHECK_NODES.includes(node)) {
        cites = message.additional_kwargs?.cites || [];
      } else if (message.type === "tool") {
        showToolResult(message);
      }
    }
    const notice = (data.messages || []).find((m) => m.type === "human" && m.name === CHECK_NAME);
    if (CHECK_NODES.includes(node) && notice) {
      dropLive();
      cites = [];
      const first = String((data.answer_problems || [])[0] ?? notice.content).split("\n")[0];
      say(`draft rejected: ${first}`, "status draft-rejected");
    }
    if (data.status && data.status !== "running" && data.final_answer !== undefined) {
      dropLive();
      showAnswer(data.final_answer, data.status === "completed" ? cites : []);
      cites = [];
      $("#chat-status").textContent = `${data.status} · session ${state.thread}`;
    }
  }
}

async function runStream(body) {
  state.abort = new AbortController();
  $("#chat-stop").disabled = false;
  $("#chat-send").disabled = true;
  $("#approval").hidden = true;
  startProgress();
  try {
    const path = `/threads/${state.thread}/runs/stream`;
    const request = { stream_mode: ["updates", "messages-tuple", "custom"], ...body };
    for await (const { event, data } of stream(path, request, state.abort.signal)) {
      if (event === "metadata") state.run = data.run_id;
      else if (event === "messages") onMessageChunk(data);
      else if (event === "updates") onUpdate(data);
      else if (event === "custom") onCustom(data);
      else if (event === "error") say(`error: ${data.message || JSON.stringify(data)}`, "error");
    }
  } catch (error) {
    if (error.name !== "AbortError") say(`error: ${error.message}`, "error");
  } finally {
    stopProgress();
    live = null;
    $("#chat-stop").disabled = true;
    $("#chat-send").disabled = false;
    state.abort = null;
  }
  await checkInterrupts();
}

async function send(event) {
  event.preventDefault();
  const task = $("#chat-task").value.trim();
  if (!task) return;
  const graph = $("#chat-agent").value;
  if (!state.thread) state.thread = (await api("POST", "/threads", { metadata: { jarvis_graph: graph } })).thread_id;
  const files = [...$("#chat-files").files];
  let input = { task };
  if (files.length) {
    const sent = await Promise.all(files.map(async (f) => ({ name: f.name, data: await base64Of(f) })));
    const reply = await fetch("/console/task", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ task, files: sent }),
    });
    const made = await reply.json();
    if (!reply.ok) { say(`error: ${made.detail}`, "error"); return; }
    input = made.input;
    if (made.note) say(made.note, "status");
    $("#chat-files").value = "";
  }
  $("#chat-task").value = "";
  say(files.length ? `${task}\n📎 ${files.map((f) => f.name).join(", ")}` : task, "user");
  $("#chat-status").textContent = `running · session ${state.thread}`;
  await runStream({
    assistant_id: assistantId(graph),
    input,
    context: { workspace: state.info.workspace, non_interactive: false },
  });
}

function base64Of(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

async function stop() {
  if (state.abort) state.abort.abort();
  if (state.thread && state.run) {
    await api("POST", `/threads/${state.thread}/runs/${state.run}/cancel?wait=true`).catch(() => {});
  }
  say("stopped; send a message to continue this session", "status");
}

async function checkInterrupts() {
  const snapshot = await api("GET", `/threads/${state.thread}/state`);
  const waiting = (snapshot.interrupts || snapshot.tasks?.flatMap((t) => t.interrupts || []) || [])[0];
  if (!waiting) return;
  const value = waiting.value || {};
  if (value.type === "confirm_tools") showApproval(value.requests);
  else if (value.type === "ask_user") showQuestion("The agent waits for your next instruction", (text) => text);
  else showQuestion(`The graph waits for input: ${JSON.stringify(value).slice(0, 300)}`, (text) => text);
}

function showApproval(requests) {
  const box = $("#approval");
  box.replaceChildren(el("strong", {}, "Approval needed"));
  const inputs = {};
  for (const request of requests) {
    const where = request.chain ? ` (step ${request.step} of chain ${request.chain})` : "";
    if (request.kind === "question") {
      const answer = el("input", { "aria-label": "answer", placeholder: "your answer" });
      inputs[request.id] = () => ({ answer: answer.value });
      box.append(el("p", {}, `? ${request.question}`), answer);
      continue;
    }
    const args = el("textarea", { rows: 6, "aria-label": `arguments of ${request.name}` });
    args.value = JSON.stringify(request.args ?? {}, null, 2);
    const reason = el("input", { placeholder: "reason (for reject)", "aria-label": "reason" });
    const choice = el("select", { "aria-label": `decision for ${request.name}` },
      el("option", { value: "approve" }, "approve"), el("option", { value: "edit" }, "edit (run with the arguments above)"),
      el("option", { value: "reject" }, "reject"));
    // A write into Jarvis' own files needs its own yes, naming the paths (confirm_tools
    // runs it only with allow_protected); "Approve all" never gives it.
    const protectedPaths = request.protected || [];
    const allow = el("input", { type: "checkbox", "aria-label": `allow writing ${protectedPaths.join(", ")}` });
    const withAllow = (decision) => (allow.checked ? { ...decision, allow_protected: protectedPaths } : decision);
    inputs[request.id] = () => {
      if (choice.value === "edit") return withAllow({ action: "edit", args: JSON.parse(args.value) });
      if (choice.value === "reject") return { action: "reject", reason: reason.value };
      return withAllow({ action: "approve" });
    };
    box.append(el("p", {}, el("code", {}, request.name), where), args, el("div", { class: "row" }, choice, reason));
    if (protectedPaths.length) {
      box.append(el("label", { class: "row" }, allow,
        ` also allow writing ${protectedPaths.join(", ")}: Jarvis' own settings, tools and memories, read by every later session`));
    }
  }
  const submit = async (decide) => {
    let decisions;
    try {
      decisions = Object.fromEntries(Object.entries(inputs).map(([id, read]) => [id, decide ? decide(id) : read()]));
    } catch (error) {
      say(`the arguments are not valid JSON (${error.message}); fix them and try again`, "error");
      return;
    }
    await runStream({
      assistant_id: assistantId($("#chat-agent").value),
      command: { resume: decisions },
      context: { workspace: state.info.workspace, non_interactive: false },
    });
  };
  box.append(el("div", { class: "row" },
    el("button", { class: "primary", type: "button", id: "approval-submit", onclick: () => submit() }, "Send decision"),
    el("button", { type: "button", id: "approval-all", onclick: () => submit(() => ({ action: "approve" })) }, "Approve all")));
  box.hidden = false;
  box.scrollIntoView({ block: "end" });
}

function showQuestion(text, wrap) {
  const box = $("#approval");
  const answer = el("input", { "aria-label": "answer", placeholder: "Enter to finish" });
  const go = () => runStream({
    assistant_id: assistantId($("#chat-agent").value),
    command: { resume: wrap(answer.value) },
    context: { workspace: state.info.workspace, non_interactive: false },
  });
  box.replaceChildren(el("p", {}, text), answer, el("button", { type: "button", onclick: go }, "Send"));
  box.hidden = false;
}

function newSession() {
  state.thread = null;
  $("#chat-log").replaceChildren();
  $("#approval").hidden = true;
  $("#chat-status").textContent = "";
}

// A session the API server has is read (and continued) through it; one it cannot have (a
// session of jarvis run) is read from the project's store by the console, to look at.
const snapshotOf = (threadId, inConsole) => (inConsole
  ? api("GET", `/threads/${threadId}/state`)
  : consoleCall(`/console/sessions/${encodeURIComponent(threadId)}`));

async function openInChat(threadId, inConsole = true) {
  newSession();
  state.thread = threadId;
  const snapshot = await snapshotOf(threadId, inConsole);
  for (const message of snapshot.values?.messages || []) {
    if (message.type === "human" && !message.name) say(message.content, "user");
    else if (message.type === "ai" && message.tool_calls?.length) message.tool_calls.forEach(showToolCall);
    else if (message.type === "tool") showToolResult(message);
  }
  const answered = (snapshot.values?.messages || []).filter((m) => m.type === "ai" && !m.tool_calls?.length).pop();
  const sources = snapshot.values?.status === "completed" ? answered?.additional_kwargs?.cites : [];
  if (snapshot.values?.final_answer) showAnswer(snapshot.values.final_answer, sources);
  $("#chat-status").textContent = `${snapshot.values?.status || "?"} · session ${threadId}`;
  show("chat");
  if (inConsole) {
    await checkInterrupts();
    return;
  }
  state.thread = null; // a message sent now starts a new session
  $("#chat-status").append(` · made outside the console: continue it with jarvis run --thread ${threadId} "…"`);
}

// ---- sessions -------------------------------------------------------------------------
// The project's sessions (its session store, as jarvis sessions list), newest first.
async function loadSessions() {
  state.sessions = await consoleCall("/console/sessions");
  showSessions();
}

function showSessions() {
  const filter = $("#session-filter").value.toLowerCase();
  const body = $("#sessions tbody");
  body.replaceChildren();
  for (const session of state.sessions || []) {
    const id = session.thread_id;
    if (filter && !session.task.toLowerCase().includes(filter)) continue;
    const actions = [
      el("button", { onclick: () => showTree(id, session.console) }, "Tree"),
      el("button", { onclick: () => openInChat(id, session.console) }, "Open"),
    ];
    if (session.console) {
      actions.splice(1, 0, el("button", { onclick: () => openSession(id) }, "History"));
      actions.push(el("button", { onclick: () => deleteSession(id) }, "Delete"));
    }
    body.append(el("tr", { "data-thread": id },
      el("td", { class: "mono", title: id }, session.console ? id.slice(0, 8) : id),
      el("td", {}, session.status),
      el("td", {}, session.task.slice(0, 90)),
      el("td", { class: "mono" }, session.updated.slice(0, 19).replace("T", " ")),
      el("td", {}, ...actions)));
  }
}

async function openSession(threadId) {
  const history = await api("POST", `/threads/${threadId}/history`, { limit: 100 });
  const box = $("#session-detail");
  box.replaceChildren(el("h3", {}, `Session ${threadId}`), el("p", {}, "Checkpoints, newest first: fork one into a new session (time travel)."));
  const table = el("table", { id: "checkpoints" }, el("tr", {}, el("th", {}, "checkpoint"), el("th", {}, "next"), el("th", {}, "messages"), el("th", {})));
  for (const point of history) {
    const id = point.checkpoint?.checkpoint_id || point.checkpoint_id;
    table.append(el("tr", {},
      el("td", { class: "mono" }, id),
      el("td", {}, (point.next || []).join(", ") || "(end)"),
      el("td", {}, String((point.values?.messages || []).length)),
      el("td", {}, el("button", { onclick: () => fork(threadId, id) }, "Fork here"))));
  }
  box.append(table);
}

// The tree of sub-runs, from the thread's own state: plan steps, and the chains and
// sub-agents tool calls ran (kept on their tool messages' artifacts).
function subRunLines(runs, depth) {
  const lines = [];
  for (const run of runs) {
    const pad = "  ".repeat(depth);
    if (run.kind === "chain") {
      const steps = Object.entries(run.steps || {}).map(([id, st]) => `${id} ${st}`).join(", ");
      lines.push(`${pad}└ chain ${run.name} · ${run.status} · ${steps}`);
    } else {
      lines.push(`${pad}└ ${run.kind} · ${run.status} · ${run.task}${run.answer ? ` → ${run.answer}` : ""}`);
    }
    lines.push(...subRunLines(run.children || [], depth + 1));
  }
  return lines;
}

function treeOf(values) {
  const lines = [`${values.status || "?"} · ${values.task || ""}`];
  const results = values.step_results || {};
  for (const step of values.plan || []) {
    const done = results[step.id] || {};
    const answer = done.answer ? ` → ${done.answer.slice(0, 160)}` : "";
    lines.push(`  └ step ${step.id} · ${done.status || "not run"} · ${step.task}${answer}`);
  }
  const runs = (values.messages || []).map((m) => m.artifact?.sub_run).filter(Boolean);
  lines.push(...subRunLines(runs, 1));
  return lines.join("\n");
}

async function showTree(threadId, inConsole = true) {
  const snapshot = await snapshotOf(threadId, inConsole);
  $("#session-detail").replaceChildren(el("h3", {}, `Session ${threadId}: sub-runs`), el("pre", { id: "tree" }, treeOf(snapshot.values || {})));
}

async function fork(threadId, checkpointId) {
  const copy = await api("POST", `/threads/${threadId}/copy`);
  await api("POST", `/threads/${copy.thread_id}/state`, { values: null, checkpoint_id: checkpointId });
  await loadSessions();
  $("#session-detail").prepend(el("p", { class: "msg status", id: "fork-result" }, `forked into session ${copy.thread_id}`));
  return copy.thread_id;
}

async function deleteSession(threadId) {
  if (!window.confirm(`Delete session ${threadId}?`)) return;
  await api("DELETE", `/threads/${threadId}`);
  await loadSessions();
}

// ---- memory ---------------------------------------------------------------------------
async function loadNamespaces() {
  const found = await api("POST", "/store/namespaces", { limit: 100 });
  const select = $("#memory-namespace");
  const chosen = select.value;
  // a label may hold "/" (a workspace path): options carry the namespace as JSON
  const listed = [...state.info.memory, ...(found.namespaces || found)].map((n) => JSON.stringify(n));
  const spaces = [...new Set(listed)];
  select.replaceChildren(...spaces.map((n) => el("option", { value: n }, JSON.parse(n).join(" · "))));
  if (spaces.includes(chosen)) select.value = chosen;
}

let memorySearches = 0; // a search's results show only if no later search started

async function searchMemory(event) {
  event?.preventDefault();
  const search = ++memorySearches;
  $("#memory-results").replaceChildren(el("p", {}, "searching…"));
  const prefix = $("#memory-namespace").value ? JSON.parse($("#memory-namespace").value) : [];
  const query = $("#memory-query").value.trim();
  const tag = $("#memory-tag").value.trim();
  const body = { namespace_prefix: prefix, limit: tag ? 500 : 50 };
  if (query) body.query = query;
  const found = await api("POST", "/store/items/search", body);
  // a store filter matches whole values only: "has this tag" is checked here
  if (tag) found.items = (found.items || []).filter((item) => (item.value?.tags || []).includes(tag)).slice(0, 50);
  if (search !== memorySearches) return;
  const box = $("#memory-results");
  box.replaceChildren();
  for (const item of found.items || []) {
    const text = el("textarea", { rows: 3, "aria-label": `memory ${item.key}` });
    text.value = item.value?.content ?? JSON.stringify(item.value);
    box.append(el("div", { class: "finding memory", "data-key": item.key },
      el("div", {}, el("span", { class: "mono" }, `${item.namespace.join(" · ")} · ${item.key}`),
        item.score != null ? el("span", { class: "tag" }, `score ${item.score.toFixed(2)}`) : "",
        ...(item.value?.tags || []).map((t) => el("span", { class: "tag" }, t))),
      text,
      el("div", { class: "row" },
        el("button", { onclick: () => api("PUT", "/store/items", { namespace: item.namespace, key: item.key, value: { ...item.value, content: text.value } }).then(() => searchMemory()) }, "Save"),
        el("button", { onclick: () => api("DELETE", "/store/items", { namespace: item.namespace, key: item.key }).then(() => searchMemory()) }, "Delete"))));
  }
  if (!(found.items || []).length) box.append(el("p", {}, "nothing found"));
  state.memory = found.items || [];
}

function exportMemory() {
  const blob = new Blob([JSON.stringify(state.memory || [], null, 2)], { type: "application/json" });
  const link = el("a", { href: URL.createObjectURL(blob), download: "jarvis-memory.json" });
  link.click();
}

// ---- security reports -----------------------------------------------------------------
function findingsOf(report) {
  if (Array.isArray(report.issues)) return report.issues;
  // SARIF 2.1.0, as jarvis sec scan --format sarif writes it
  return (report.runs || []).flatMap((run) => (run.results || []).map((r) => {
    const where = r.locations?.[0]?.physicalLocation || {};
    const props = r.properties || {};
    const evidence = (r.relatedLocations || []).map((rel) => {
      const at = rel.physicalLocation || {};
      const region = at.region || {};
      return { location: `${at.artifactLocation?.uri}:${region.startLine}-${region.endLine}`, code: region.snippet?.text || "" };
    });
    return {
      file: where.artifactLocation?.uri || "", line: where.region?.startLine || 1,
      pattern: r.ruleId, description: r.message?.text || "", severity: r.level || "", cwe: props.cwe || "",
      verification: props.verdict ? { verdict: props.verdict, reasoning: props.verdictReasoning, grounded: props.verdictGrounded, evidence } : undefined,
    };
  }));
}

function verdictOf(v) {
  if (!v) return "";
  const claimed = v.claimed ? ` (the verifier said ${v.claimed})` : "";
  const box = el("div", { class: "verdict" }, el("strong", {}, `verdict: ${v.verdict}${claimed}`), ` ${v.reasoning || ""}`);
  for (const item of v.evidence || []) box.append(el("div", { class: "mono" }, `evidence ${item.location}: ${item.code || ""}`));
  if (v.grounded === false) box.append(el("div", {}, `not grounded: ${(v.grounding_problems || []).join("; ")}`));
  return box;
}

async function loadReport(file) {
  const report = JSON.parse(await file.text());
  state.findings = findingsOf(report);
  const options = (key) => ["", ...new Set(state.findings.map(key).filter(Boolean))].sort();
  const fill = (sel, label, values) => $(sel).replaceChildren(...values.map((v) => el("option", { value: v }, v || label)));
  fill("#f-cwe", "any CWE", options((f) => f.cwe));
  fill("#f-severity", "any severity", options((f) => f.severity));
  fill("#f-verdict", "any verdict", options((f) => f.verification?.verdict || "not verified"));
  $("#report-filters").hidden = false;
  renderReport();
}

async function renderReport() {
  const cwe = $("#f-cwe").value, sev = $("#f-severity").value, verdict = $("#f-verdict").value;
  const file = $("#f-file").value;
  const shown = state.findings.filter((f) => (!cwe || f.cwe === cwe) && (!sev || f.severity === sev)
    && (!verdict || (f.verification?.verdict || "not verified") === verdict) && (!file || f.file.includes(file)));
  const box = $("#report");
  box.replaceChildren(el("p", {}, `${shown.length} of ${state.findings.length} findings`));
  for (const f of shown.slice(0, 200)) {
    const code = el("div", { class: "code" });
    const verification = verdictOf(f.verification);
    box.append(el("div", { class: "finding" },
      el("div", {}, el("span", { class: `tag sev-${f.severity}` }, f.severity || "?"), el("span", { class: "tag" }, f.cwe || ""),
        el("span", { class: "mono" }, `${f.file}:${f.line}`), ` ${f.pattern || ""}`),
      el("div", {}, f.description || ""), verification, code));
    fetch(`/console/code?file=${encodeURIComponent(f.file)}&line=${f.line}&around=6`).then(async (reply) => {
      if (!reply.ok) { code.append(el("em", {}, (await reply.json()).detail)); return; }
      const excerpt = await reply.json();
      const pre = el("pre", {});
      for (const line of excerpt.lines) {
        const row = el("span", line.number === f.line ? { class: "hit" } : {}, `${String(line.number).padStart(5)} | ${line.text}\n`);
        pre.append(row);
      }
      code.append(pre);
    });
  }
}

// ---- graph ----------------------------------------------------------------------------
function mermaidOf(graph) {
  const id = (name) => name.replace(/[^A-Za-z0-9_]/g, "_");
  const lines = ["graph TD;"];
  for (const node of graph.nodes) lines.push(`  ${id(node.id)}(${JSON.stringify(node.id)});`);
  for (const edge of graph.edges) lines.push(`  ${id(edge.source)} ${edge.conditional ? "-.->" : "-->"} ${id(edge.target)};`);
  return lines.join("\n");
}

async function drawGraph() {
  const graph = await api("GET", `/assistants/${assistantId($("#graph-agent").value)}/graph`);
  const text = mermaidOf(graph);
  const view = $("#graph-view");
  if (window.mermaid) {
    window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
    const { svg } = await window.mermaid.render(`g${Date.now()}`, text);
    view.innerHTML = svg;
  } else {
    view.replaceChildren(el("p", {}, "Mermaid is not installed (make ui-assets); the graph as Mermaid text:"), el("pre", {}, text));
  }
}

// ---- start ----------------------------------------------------------------------------
async function start() {
  state.info = await (await fetch("/console/info")).json();
  $("#workspace").textContent = state.info.workspace;
  state.assistants = await api("POST", "/assistants/search", { limit: 50 });
  const order = ["agent", "code_agent", "multi_agent", "planner"];
  const rank = (g) => (order.includes(g) ? order.indexOf(g) : order.length);
  const graphs = state.assistants.map((a) => a.graph_id).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  for (const sel of ["#chat-agent", "#graph-agent"]) {
    $(sel).replaceChildren(...graphs.map((g) => el("option", { value: g }, g)));
  }
  document.querySelectorAll("header nav button").forEach((b) => b.addEventListener("click", () => show(b.dataset.page)));
  $("#chat-form").addEventListener("submit", send);
  $("#chat-stop").addEventListener("click", stop);
  $("#chat-new").addEventListener("click", newSession);
  $("#sessions-refresh").addEventListener("click", loadSessions);
  $("#session-filter").addEventListener("input", showSessions);
  $("#memory-form").addEventListener("submit", searchMemory);
  $("#memory-namespace").addEventListener("change", () => searchMemory());
  $("#memory-export").addEventListener("click", exportMemory);
  $("#report-file").addEventListener("change", (e) => e.target.files[0] && loadReport(e.target.files[0]));
  for (const sel of ["#f-cwe", "#f-severity", "#f-verdict", "#f-file"]) $(sel).addEventListener("input", renderReport);
  $("#graph-agent").addEventListener("change", drawGraph);
  document.body.dataset.ready = "true";
}

start().catch((error) => say(`error: ${error.message}`, "error"));
