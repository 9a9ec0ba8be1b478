// stepswitch studio: every asset is served by the local server; nothing is fetched elsewhere.
"use strict";
const S = { page: null, wf: 0, view: "graph", tab: "agent", trail: 0, turn: 0, version: 0,
            vb: null, lit: null };

function el(tag, cls, ...kids) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const k of kids) {
    if (k === null || k === undefined) continue;
    e.append(typeof k === "string" || typeof k === "number" ? String(k) : k);
  }
  return e;
}
function json(value) { return el("pre", null, JSON.stringify(value, null, 2)); }
function $(id) { return document.getElementById(id); }
function wf() { return S.page.workflows[S.wf]; }

// where the reader is (workflow, tab, agent, run, turn) is kept in the URL's fragment,
// so a refresh comes back to it; replaceState adds no history entries
function saveHash() {
  const q = new URLSearchParams({ wf: S.wf, tab: S.tab, agent: S.selected || "", run: S.trail,
                                  turn: S.turn });
  history.replaceState(null, "", "#" + q.toString());
}
function readHash() {
  const q = new URLSearchParams(location.hash.slice(1)), num = k => Math.max(0, +q.get(k) || 0);
  S.wf = num("wf"); S.trail = num("run"); S.turn = num("turn");
  if (["agent", "findings", "run", "diff"].includes(q.get("tab"))) S.tab = q.get("tab");
  if (q.get("agent")) S.selected = q.get("agent");
}

async function load() {
  const r = await fetch("/api/page", { cache: "no-store" });
  S.page = await r.json();
  if (S.wf >= S.page.workflows.length) S.wf = 0;
  const sel = $("workflow");
  sel.replaceChildren(...S.page.workflows.map((w, i) => {
    const o = el("option", null, w.label); o.value = i; return o; }));
  sel.value = S.wf;
  draw();
}

function draw() {
  const w = wf();
  const canvas = $("canvas");
  canvas.innerHTML = S.view === "graph" ? w.svg : w.machine;
  const svg = canvas.querySelector("svg");
  if (svg) {
    svg.removeAttribute("width"); svg.removeAttribute("height");
    for (const g of svg.querySelectorAll("g.node, g.edge")) {
      const t = g.querySelector("title");
      if (t) g.dataset.id = t.textContent;
      // an agent's box is reached with Tab and opened with Enter, as a click opens it
      if (g.classList.contains("node")) { g.tabIndex = 0; g.setAttribute("role", "button"); }
    }
    if (!S.vb) S.vb = svg.viewBox.baseVal && [svg.viewBox.baseVal.x, svg.viewBox.baseVal.y,
      svg.viewBox.baseVal.width, svg.viewBox.baseVal.height];
    setViewBox();
  }
  renderFindings(); renderRun(); renderDiff();
  const keep = S.tab;  // a reload redraws the selected agent, and stays on the tab it was on
  if (S.selected && w.agents[S.selected]) showAgent(S.selected); else if (!S.selected) {
    $("tab-agent").replaceChildren(el("p", "none", "click an agent on the diagram")); }
  tab(keep);
}

function svgEl() { return $("canvas").querySelector("svg"); }
function setViewBox() { const s = svgEl(); if (s && S.vb) s.setAttribute("viewBox", S.vb.join(" ")); }
function fit() { S.vb = null; draw(); }

function node(id) { const s = svgEl(); return s && s.querySelector(`g[data-id="${CSS.escape(id)}"]`); }
function clearClass(cls) { for (const g of document.querySelectorAll("svg ." + cls)) g.classList.remove(cls); }
function light(...ids) {
  clearClass("lit");
  for (const id of ids) { const g = id && node(id); if (g) g.classList.add("lit"); }
}

// -- the agent panel --
function showAgent(name) {
  S.selected = name;
  const w = wf(), a = w.agents[name], box = $("tab-agent");
  const parts = [el("h2", null, a.name), el("div", "muted", a.location)];
  parts.push(el("h3", null, "instructions"),
    a.instructions !== null ? el("pre", null, a.instructions)
      : el("p", "muted", a.instructions_fn ? "from " + a.instructions_fn : "none"));
  parts.push(el("h3", null, "model"), el("p", null, a.model || "the run's default"));
  if (Object.keys(a.model_settings).length) parts.push(json(a.model_settings));
  if (a.output) parts.push(el("h3", null, "output: " + a.output.type), json(a.output.schema));
  parts.push(el("h3", null, `tools (${a.tools.length})`));
  for (const t of a.tools) {
    const d = el("div", "item tool", el("span", "code", t.name),
      t.needs_approval !== "never" ? el("span", "muted", " needs approval: " + t.needs_approval) : null,
      el("div", null, t.description), json(t.parameters));
    d.dataset.tool = t.name; parts.push(d);
  }
  parts.push(el("h3", null, `handoffs (${a.handoffs.length})`));
  for (const h of a.handoffs) parts.push(el("div", "item", el("span", "code", h.tool_name),
    ` → ${h.target}`, el("div", "muted", h.max_uses === null ? "no budget" : `budget: at most ${h.max_uses} uses`),
    el("div", null, h.description)));
  parts.push(el("h3", null, `agent tools (${a.agent_tools.length})`));
  for (const t of a.agent_tools) parts.push(el("div", "item", el("span", "code", t.tool_name),
    ` runs ${t.target}`, el("div", "muted", `max_turns ${t.max_turns ?? "-"}, max_depth ${t.max_depth ?? "-"}, approval ${t.needs_approval}`),
    json(t.parameters)));
  parts.push(el("h3", null, "guardrails"), a.guardrails.length
    ? el("ul", null, ...a.guardrails.map(g => el("li", null, `${g.kind}: ${g.name}`))) : el("p", "muted", "none"));
  parts.push(el("h3", null, "pause points"), a.pauses.length
    ? el("ul", null, ...a.pauses.map(p => el("li", null, p))) : el("p", "muted", "none"));
  parts.push(el("h3", null, "findings"));
  parts.push(...(a.findings.length ? a.findings.map(i => finding(w.findings[i])) : [el("p", "muted", "none")]));
  box.replaceChildren(...parts);
  light(a.node);
  tab("agent");
}

function finding(f) {
  const d = el("div", "finding " + f.severity, el("span", "code", f.code), ` ${f.severity}: ${f.message}`,
    el("div", "muted", [f.location, f.path].filter(Boolean).join("  ")));
  // a failing policy's counterexample: its steps listed, and the whole path lit on a click
  if (f.trace.length) d.append(el("ol", "trace", ...f.trace.map(s =>
    el("li", null, s.message, el("span", "muted", "  " + s.location)))));
  const show = () => f.lights.length ? light(...f.lights) : light(f.node, f.edge);
  d.tabIndex = 0;
  d.onclick = show;
  d.onkeydown = e => { if (e.key === "Enter") show(); };
  return d;
}
function renderFindings() {
  const w = wf();
  $("tab-findings").replaceChildren(el("h2", null, `${w.findings.length} findings`),
    ...w.findings.map(finding));
}

// -- a recorded run --
function renderRun() {
  const w = wf(), box = $("tab-run");
  clearClass("current"); clearClass("visited");
  if (!w.trails.length) { box.replaceChildren(el("p", "none", "no run: start with --trail FILE")); return; }
  if (S.trail >= w.trails.length) S.trail = 0;
  const t = w.trails[S.trail];
  const sel = el("select"); sel.setAttribute("aria-label", "run");
  w.trails.forEach((x, i) => { const o = el("option", null, x.label); o.value = i; sel.append(o); });
  sel.value = S.trail; sel.onchange = () => { S.trail = +sel.value; S.turn = 0; renderRun(); saveHash(); };
  if (t.refused || !t.turns.length) { box.replaceChildren(sel, el("div", "refused", el("strong", null, "refused: "), t.refused || "no turns")); return; }
  S.turn = Math.max(0, Math.min(S.turn, t.turns.length - 1));
  const turn = t.turns[S.turn];
  const parts = [sel, el("div", "turnbar", el("button", null, "◀"), el("span", "pos", `turn ${S.turn + 1} of ${t.turns.length}`),
    el("button", null, "▶"), el("span", "muted", "(← → keys)"))];
  parts[1].children[0].onclick = () => stepRun(-1); parts[1].children[2].onclick = () => stepRun(1);
  parts.push(el("h2", null, el("span", "step", turn.step), el("span", "muted", " at agent "), el("span", "agent", turn.agent || "?")));
  for (const it of turn.items) {
    const d = el("div", "item " + it.kind, el("span", "kind", it.kind), " ",
      it.name ? el("span", "code", it.name) : null, it.call_id ? el("span", "muted", ` ${it.call_id}`) : null,
      it.pending ? el("span", "muted", " (waiting for a decision)") : null,
      el("span", "muted", ` ${it.where}`));
    if (it.text) d.append(el("pre", null, it.text));
    if (it.arguments) d.append(el("div", "muted", "arguments"), el("pre", "args", pretty(it.arguments)));
    if (it.output !== null && it.output !== undefined) d.append(el("div", "muted", "output"), el("pre", "output", it.output));
    parts.push(d);
  }
  if (t.findings.length) {
    parts.push(el("h3", null, "trail findings"));
    for (const f of t.findings) parts.push(el("div", "finding warning", el("span", "code", f.code), ` ${f.message} (${f.where})`));
  }
  box.replaceChildren(...parts);
  for (const id of turn.path) { const g = node(id); if (g) g.classList.add("visited"); }
  const g = turn.node && node(turn.node); if (g) g.classList.add("current");
}
function pretty(text) { try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; } }
function stepRun(by) { S.turn += by; clearClass("lit"); renderRun(); saveHash(); }

// -- a change --
function renderDiff() {
  const w = wf(), box = $("tab-diff");
  for (const c of ["state", "model", "safety", "structure", "cosmetic"]) clearClass("diff-" + c);
  if (!w.diff) { box.replaceChildren(el("p", "none", "no diff: start with --base REF or two TARGETs")); return; }
  const counts = Object.entries(w.diff.counts).filter(([, n]) => n).map(([c, n]) => `${n} ${c}`).join(", ");
  box.replaceChildren(el("h2", null, `changes from ${w.diff.base}`), el("p", "muted", counts || "no change"),
    ...w.diff.changes.map(c => { const d = el("div", "change cat-" + c.category,
      el("span", "code", c.category), ` ${c.kind} ${c.path}`, el("div", null, c.message));
      d.onclick = () => light(c.node); return d; }));
  for (const [id, cat] of Object.entries(w.diff.nodes)) { const g = node(id); if (g) g.classList.add("diff-" + cat); }
}

function tab(name) {
  S.tab = name; saveHash();
  for (const b of document.querySelectorAll(".tabs button")) b.classList.toggle("on", b.dataset.tab === name);
  for (const t of document.querySelectorAll(".tab")) t.classList.toggle("on", t.id === "tab-" + name);
}

// -- pan and zoom: the SVG's viewBox --
function wire() {
  const canvas = $("canvas");
  let drag = null;
  canvas.addEventListener("mousedown", e => { drag = { x: e.clientX, y: e.clientY, moved: false }; });
  window.addEventListener("mouseup", () => { setTimeout(() => { drag = null; }, 0); });
  canvas.addEventListener("mousemove", e => {
    if (!drag || !S.vb) return;
    const s = svgEl(), r = s.getBoundingClientRect(), k = Math.max(S.vb[2] / r.width, S.vb[3] / r.height);
    S.vb[0] -= (e.clientX - drag.x) * k; S.vb[1] -= (e.clientY - drag.y) * k;
    if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 2) drag.moved = true;
    drag.x = e.clientX; drag.y = e.clientY; setViewBox();
  });
  canvas.addEventListener("wheel", e => {
    if (!S.vb) return; e.preventDefault();
    const f = e.deltaY > 0 ? 1.15 : 1 / 1.15, s = svgEl(), r = s.getBoundingClientRect();
    const px = S.vb[0] + (e.clientX - r.left) / r.width * S.vb[2], py = S.vb[1] + (e.clientY - r.top) / r.height * S.vb[3];
    S.vb = [px - (px - S.vb[0]) * f, py - (py - S.vb[1]) * f, S.vb[2] * f, S.vb[3] * f]; setViewBox();
  }, { passive: false });
  canvas.addEventListener("click", e => {
    if (drag && drag.moved) return;
    const g = e.target.closest("g.node"); if (!g) return;
    const name = Object.keys(wf().agents).find(n => wf().agents[n].node === g.dataset.id);
    if (name) showAgent(name);
  });
  canvas.addEventListener("keydown", e => {
    const g = e.key === "Enter" && e.target.closest && e.target.closest("g.node"); if (!g) return;
    const name = Object.keys(wf().agents).find(n => wf().agents[n].node === g.dataset.id);
    if (name) { showAgent(name); e.preventDefault(); }
  });
  document.addEventListener("keydown", e => {
    if (e.target.tagName === "SELECT" || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") { tab("run"); stepRun(e.key === "ArrowRight" ? 1 : -1); e.preventDefault(); }
    else if (e.key === "+" || e.key === "-") { if (S.vb) { const f = e.key === "+" ? 1 / 1.2 : 1.2;
      S.vb = [S.vb[0], S.vb[1], S.vb[2] * f, S.vb[3] * f]; setViewBox(); } }
  });
  for (const b of document.querySelectorAll(".tabs button")) b.onclick = () => tab(b.dataset.tab);
  $("workflow").onchange = () => { S.wf = +$("workflow").value; S.vb = null; S.selected = null; draw(); };
  $("view-graph").onclick = () => view("graph");
  $("view-machine").onclick = () => view("machine");
  $("fit").onclick = fit;
}
function view(v) { S.view = v; S.vb = null; $("view-graph").classList.toggle("on", v === "graph");
  $("view-machine").classList.toggle("on", v === "machine"); draw(); }

async function poll() {
  try {
    const r = await fetch("/api/version", { cache: "no-store" }), v = await r.json();
    const st = $("status");
    // an error shows while it lasts; "reloaded …" stays until the next change
    if (v.error) st.textContent = "reload failed: " + v.error;
    else if (st.classList.contains("error")) st.textContent = "";
    st.classList.toggle("error", !!v.error);
    if (v.version !== S.version) {
      const first = !S.version; S.version = v.version;
      if (!first) { await load(); st.textContent = "reloaded " + new Date().toLocaleTimeString(); }
    }
  } catch (e) { $("status").textContent = "server stopped"; }
}

wire();
readHash();
load().then(() => { poll(); setInterval(poll, 1000); });
