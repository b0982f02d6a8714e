// The run report's script: tabs, the configuration x task matrix, the trajectory viewer and search.
// Everything comes from JSON embedded in the page; transcript pages are parsed only when opened.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const INDEX = JSON.parse($("rsi-index").textContent);
  const V = INDEX.verdicts; // ["passed", "failed", "timeout", "error"]
  const ROWS_PER_PAGE = 100;
  const pageCache = new Map();
  let strings = null;

  // -- small helpers ---------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }
  const attempt = (n) => {
    const a = INDEX.attempts[n];
    return { n, job: a[0], config: a[1], task: a[2], index: a[3], verdict: V[a[4]], tokens: a[5], wall_s: a[6],
      reason: a[7], error_class: a[8], started: a[9], retries: a[10], page: a[11], has_file: a[12] };
  };
  const configName = (i) => INDEX.configs[i][0];
  const taskKey = (i) => INDEX.tasks[i][0];

  // -- transcript pages (lazy) -----------------------------------------------------------------
  function decodeBase64(b64) {
    if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64); // native where the browser has it
    const binary = atob(b64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }
  async function inflate(b64) {
    const bytes = decodeBase64(b64);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).text();
  }
  async function loadPage(p) {
    if (p < 0) return {};
    if (!pageCache.has(p)) {
      pageCache.set(p, (async () => {
        const text = $("rsi-page-" + p).textContent;
        return JSON.parse(INDEX.compressed ? await inflate(text) : text);
      })());
    }
    return pageCache.get(p);
  }
  function text(value) {
    if (typeof value === "number") {
      if (strings === null) strings = JSON.parse($("rsi-strings").textContent);
      return strings[value];
    }
    return value || "";
  }
  async function transcript(n) {
    const a = attempt(n);
    const page = await loadPage(a.page);
    return page[String(n)] || null;
  }

  // -- tabs ------------------------------------------------------------------------------------
  function show(view) {
    for (const section of document.querySelectorAll("section.view")) section.hidden = section.id !== "view-" + view;
    for (const link of document.querySelectorAll("#tabs a")) link.classList.toggle("active", link.dataset.view === view);
    if (view === "matrix") drawMatrix();
  }
  function route() {
    const hash = location.hash.slice(1) || "overview";
    const m = /^attempt-(\d+)$/.exec(hash);
    const t = /^task-(\d+)$/.exec(hash);
    if (m) { if (!document.querySelector("section.view:not([hidden])")) show("matrix"); openAttempts([+m[1]], "attempt " + m[1]); return; }
    if (t) { show("matrix"); openTask(+t[1]); return; }
    if (["overview", "matrix", "jobs", "search"].includes(hash)) show(hash);
  }
  window.addEventListener("hashchange", route);

  // -- matrix ----------------------------------------------------------------------------------
  const cellAt = new Map(); // "config,task" -> cell array
  for (const c of INDEX.cells) cellAt.set(c[0] + "," + c[1], c);
  const state = { split: "", tag: "", verdict: "", text: "", sort: "task", sortConfig: -1, page: 0 };

  function cellClass(c) {
    if (!c) return "none";
    if (c[2] > 0) return "passed";
    if (c[4] > 0) return "timeout";
    if (c[3] > 0) return "failed";
    return "error";
  }
  function cellRank(c) { return { passed: 4, timeout: 2, failed: 1, error: 0, none: -1 }[cellClass(c)]; }
  function solvedBy(t) {
    let k = 0;
    for (let c = 0; c < INDEX.configs.length; c++) { const cell = cellAt.get(c + "," + t); if (cell && cell[2] > 0) k++; }
    return k;
  }
  function rowMatches(t) {
    const [key, split, tags] = INDEX.tasks[t];
    if (state.split && split !== state.split) return false;
    if (state.tag && !tags.includes(state.tag)) return false;
    if (state.text && !key.toLowerCase().includes(state.text)) return false;
    if (!state.verdict) return true;
    const cells = INDEX.configs.map((_, c) => cellAt.get(c + "," + t));
    if (state.verdict === "solved") return cells.some((c) => c && c[2] > 0);
    if (state.verdict === "unsolved") return !cells.some((c) => c && c[2] > 0);
    if (state.verdict === "not tried") return cells.some((c) => !c);
    const i = V.indexOf(state.verdict);
    return cells.some((c) => c && c[2 + i] > 0);
  }
  function sortedRows() {
    const rows = INDEX.tasks.map((_, t) => t).filter(rowMatches);
    const key = {
      task: (t) => taskKey(t),
      split: (t) => INDEX.tasks[t][1] + " " + taskKey(t),
      tag: (t) => (INDEX.tasks[t][2].join(",") || "\uffff") + " " + taskKey(t),
      solved: (t) => -solvedBy(t),
      unsolved: (t) => solvedBy(t),
      config: (t) => -cellRank(cellAt.get(state.sortConfig + "," + t)),
    }[state.sort];
    rows.sort((a, b) => { const x = key(a), y = key(b); return x < y ? -1 : x > y ? 1 : a - b; });
    return rows;
  }
  function select(label, values, current, onchange) {
    const s = el("select", { "aria-label": label, onchange: (e) => onchange(e.target.value) });
    for (const [value, name] of values) {
      const o = el("option", { value }, name);
      if (value === current) o.selected = true;
      s.append(o);
    }
    return el("label", {}, label + " ", s);
  }
  function drawControls() {
    const splits = [...new Set(INDEX.tasks.map((t) => t[1]))].filter(Boolean).sort();
    const redraw = (field) => (value) => { state[field] = value; state.page = 0; drawMatrix(); };
    $("matrix-controls").replaceChildren(
      select("split", [["", "all"], ...splits.map((s) => [s, s])], state.split, redraw("split")),
      select("tag", [["", "all"], ...INDEX.tags.map((s) => [s, s])], state.tag, redraw("tag")),
      select("verdict", [["", "any"], ["solved", "solved by some configuration"], ["unsolved", "solved by none"],
        ...V.map((v) => [v, "has " + v]), ["not tried", "not tried by some configuration"]], state.verdict, redraw("verdict")),
      select("sort", [["task", "task"], ["split", "split"], ["tag", "tag"], ["solved", "most solved"],
        ["unsolved", "least solved"]],
        state.sort, (v) => { state.sort = v; state.sortConfig = -1; drawMatrix(); }),
      el("input", { type: "search", placeholder: "task name", id: "matrix-filter", value: state.text,
        oninput: (e) => { state.text = e.target.value.toLowerCase(); state.page = 0; drawMatrix(false); } }),
      el("span", { class: "legend" }, ...["passed", "failed", "timeout", "error", "none"].map(
        (v) => el("span", { class: "cell " + v }, v === "none" ? "not tried" : v))));
  }
  function drawMatrix(controls = true) {
    if (controls) drawControls();
    const rows = sortedRows();
    const pages = Math.max(1, Math.ceil(rows.length / ROWS_PER_PAGE));
    state.page = Math.min(state.page, pages - 1);
    const shown = rows.slice(state.page * ROWS_PER_PAGE, (state.page + 1) * ROWS_PER_PAGE);
    const head = el("tr", {}, el("th", { class: "l" }, "task"), el("th", {}, "split"), el("th", {}, "solved by"));
    INDEX.configs.forEach((c, i) => head.append(el("th", {
      class: "cfg" + (state.sortConfig === i ? " sorted" : ""), title: `${c[0]} (${c[1]}): ${c[4]} tasks solved, ` +
        `${c[3]}/${c[2]} attempts passed — click to sort`,
      onclick: () => { state.sort = "config"; state.sortConfig = i; drawMatrix(false); },
    }, el("span", {}, c[0]), el("small", {}, String(c[4])))));
    const body = el("tbody");
    for (const t of shown) {
      const [key, split] = INDEX.tasks[t];
      const tr = el("tr", {}, el("td", { class: "l" }, el("a", { href: "#task-" + t, class: "task-link" }, key)),
        el("td", {}, split || "-"), el("td", {}, String(solvedBy(t))));
      INDEX.configs.forEach((_, c) => {
        const cell = cellAt.get(c + "," + t);
        const td = el("td", { class: "cell " + cellClass(cell), "data-config": c, "data-task": t });
        if (cell) {
          const tried = cell.slice(2, 6).reduce((x, y) => x + y, 0);
          td.textContent = `${cell[2]}/${tried}`;
          td.title = `${configName(c)} on ${key}: ` + V.map((v, i) => `${cell[2 + i]} ${v}`).join(", ");
          td.addEventListener("click", () => openCell(c, t));
        } else td.title = `${configName(c)} never tried ${key}`;
        tr.append(td);
      });
      body.append(tr);
    }
    $("matrix").replaceChildren(el("table", { class: "matrix" }, el("thead", {}, head), body));
    const pager = $("matrix-pager");
    pager.replaceChildren(
      el("button", { onclick: () => { state.page--; drawMatrix(false); }, ...(state.page ? {} : { disabled: "" }) }, "previous"),
      el("span", {}, ` tasks ${rows.length ? state.page * ROWS_PER_PAGE + 1 : 0}-${state.page * ROWS_PER_PAGE + shown.length}` +
        ` of ${rows.length} (page ${state.page + 1}/${pages}) `),
      el("button", { onclick: () => { state.page++; drawMatrix(false); }, ...(state.page < pages - 1 ? {} : { disabled: "" }) }, "next"));
  }

  // -- trajectory viewer -----------------------------------------------------------------------
  function openCell(c, t) {
    const cell = cellAt.get(c + "," + t);
    openAttempts(cell ? cell[6] : [], `${configName(c)} on ${taskKey(t)}`);
  }
  function openTask(t) {
    const ns = INDEX.attempts.map((_, n) => n).filter((n) => INDEX.attempts[n][2] === t);
    openAttempts(ns, `all attempts at ${taskKey(t)}`);
  }
  function openAttempts(ns, title) {
    $("viewer").hidden = false;
    $("viewer-title").textContent = `${title} — ${ns.length} attempt${ns.length === 1 ? "" : "s"}`;
    const list = $("viewer-list");
    list.replaceChildren(...ns.map((n) => {
      const a = attempt(n);
      return el("li", { "data-n": n, class: "v-" + a.verdict, onclick: () => showAttempt(n) },
        el("span", { class: "badge " + a.verdict }, a.verdict), ` job ${a.job} · ${configName(a.config)} · #${a.index}`);
    }));
    if (ns.length) showAttempt(ns[ns.length - 1]);
    else $("viewer-attempt").replaceChildren(el("p", { class: "note" }, "no attempts"));
  }
  function pre(label, body, cls) {
    if (body === null || body === undefined || body === "") return null;
    return el("div", { class: "block " + (cls || "") }, el("div", { class: "label" }, label), el("pre", {}, body));
  }
  function kv(pairs) {
    return el("table", { class: "kv" }, ...pairs.filter((p) => p[1] !== undefined && p[1] !== "").map(
      ([k, v]) => el("tr", {}, el("th", { class: "l" }, k), el("td", { class: "l" }, v))));
  }
  function renderStep(s) {
    const who = { system: "system", user: "user", agent: "assistant", environment: "observation" }[s.source] || s.source;
    const meta = [s.turn ? "turn " + s.turn : "", s.specialist ? "specialist " + s.specialist : "",
      s.tokens ? s.tokens + " tokens" : "", s.latency_s ? s.latency_s.toFixed(2) + " s" : "",
      s.error ? "cell raised" : "", s.timed_out ? "timed out" : ""].filter(Boolean).join(" · ");
    return el("div", { class: "step " + s.source },
      el("div", { class: "who" }, who, meta ? el("span", { class: "note" }, " " + meta) : null),
      el("pre", {}, text(s.message)),
      pre("code run", s.code, "code"),
      pre("public checks", s.check, "obs"),
      pre("observation", s.observation, "obs"));
  }
  async function showAttempt(n) {
    for (const li of document.querySelectorAll("#viewer-list li")) li.classList.toggle("current", +li.dataset.n === n);
    const a = attempt(n);
    const box = $("viewer-attempt");
    box.replaceChildren(el("p", { class: "note" }, "loading…"));
    const tr = a.page >= 0 ? await transcript(n) : null;
    const head = el("div", { class: "attempt-head", id: "attempt-" + n },
      el("h3", {}, el("span", { class: "badge " + a.verdict }, a.verdict), ` ${taskKey(a.task)} · ${configName(a.config)}`),
      kv([["job / attempt", `${a.job} / #${a.index}`], ["reason", (tr && tr.reason) || a.reason || "-"],
        ["error class", a.error_class], ["ended by", tr ? tr.ended_by : ""],
        ["tokens", tr ? `${a.tokens} (prompt ${tr.prompt_tokens || 0}, completion ${tr.completion_tokens || 0})` : String(a.tokens)],
        ["wall time", `${a.wall_s} s` + (tr && tr.verifier_wall_s ? ` (verifier ${tr.verifier_wall_s.toFixed(2)} s)` : "")],
        ["started", a.started], ["retried errors", a.retries ? String(a.retries) : ""],
        ["model / seed", tr ? `${tr.model || "-"} / ${tr.seed || 0}` : ""], ["attempt id", tr ? tr.attempt_id : ""]]));
    const parts = [head];
    if (!tr) parts.push(el("p", { class: "note" }, a.has_file ? "trajectory file not readable" :
      "no trajectory stored for this attempt (it ran without the agent harness)"));
    else if (tr.problem) parts.push(el("p", { class: "warn" }, "trajectory unreadable: " + tr.problem));
    else {
      if (tr.sandbox && Object.keys(tr.sandbox).length) {
        parts.push(el("div", { class: "label" }, "sandbox isolation"),
          kv(Object.entries(tr.sandbox).map(([k, v]) => [k, String(v)])));
      }
      parts.push(el("div", { class: "label" }, `conversation (${(tr.steps || []).length} steps, ${tr.turns || 0} turns)`));
      for (const s of tr.steps || []) parts.push(renderStep(s));
      parts.push(pre("final " + (tr.solution_file || "solution"), tr.final_code === undefined || tr.final_code === null ?
        "(not written)" : tr.final_code, "final"));
      if (tr.layer_scores && Object.keys(tr.layer_scores).length) {
        parts.push(el("div", { class: "label" }, "verifier layers"),
          el("table", { class: "kv layers" }, ...Object.entries(tr.layer_scores).map(([k, v]) =>
            el("tr", {}, el("th", { class: "l" }, k), el("td", {}, `${Math.round(v * 100)}%`)))));
      }
      if (tr.screenshot) {
        parts.push(el("div", { class: "label" }, "screenshot (as the verifier saw the page)"),
          el("img", { class: "screenshot", src: tr.screenshot, alt: "the page as the verifier rendered it" }));
      } else if (tr.screenshot_note) parts.push(el("p", { class: "note" }, tr.screenshot_note));
      if (tr.tools_saved && tr.tools_saved.length) parts.push(pre("tools saved", tr.tools_saved.join(", ")));
    }
    box.replaceChildren(...parts);
    box.scrollTop = 0;
  }
  $("viewer-close").addEventListener("click", () => { $("viewer").hidden = true; });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") $("viewer").hidden = true; });

  // -- search ----------------------------------------------------------------------------------
  function haystack(a, tr) {
    const parts = [taskKey(a.task), configName(a.config), a.reason];
    if (tr) {
      parts.push(tr.reason || "", tr.final_code || "");
      for (const s of tr.steps || []) parts.push(text(s.message), s.code || "", s.check || "", s.observation || "");
    }
    return parts.join("\n");
  }
  function snippet(hay, at, length) {
    const start = Math.max(0, at - 60), end = Math.min(hay.length, at + length + 60);
    return el("span", { class: "snippet" }, (start ? "…" : "") + hay.slice(start, at),
      el("mark", {}, hay.slice(at, at + length)), hay.slice(at + length, end) + (end < hay.length ? "…" : ""));
  }
  const lowered = new Map(); // attempt n -> its lower-cased text, so a second search rebuilds nothing
  async function haystackOf(n) {
    const a = attempt(n);
    return haystack(a, a.page >= 0 ? await transcript(n) : null);
  }
  let searchToken = 0;
  async function search(query) {
    const token = ++searchToken;
    const q = query.trim().toLowerCase();
    const out = $("search-results");
    out.replaceChildren();
    if (!q) { $("search-status").textContent = ""; return; }
    let hits = 0, shown = 0;
    const limit = 200;
    // Start inflating the next pages while this one is searched (the browser inflates off the script's thread).
    const ahead = 4;
    const prefetch = (n) => { const a = n < INDEX.attempts.length ? attempt(n) : null; if (a && a.page >= 0) loadPage(a.page); };
    for (let n = 0; n < INDEX.attempts.length; n++) {
      if (token !== searchToken) return; // a newer search started
      if (n % 500 === 0) $("search-status").textContent = `searching… ${n}/${INDEX.attempts.length}`;
      if (n % 50 === 0) for (let k = 1; k <= ahead; k++) prefetch(n + 50 * k);
      const a = attempt(n);
      if (!lowered.has(n)) lowered.set(n, (await haystackOf(n)).toLowerCase());
      const at = lowered.get(n).indexOf(q);
      if (at < 0) continue;
      hits++;
      if (shown < limit) {
        shown++;
        const hay = await haystackOf(n); // the original case, for the snippet (shown hits only)
        out.append(el("div", { class: "hit", "data-n": n },
          el("a", { href: "#attempt-" + n }, el("span", { class: "badge " + a.verdict }, a.verdict),
            ` ${taskKey(a.task)} · ${configName(a.config)} · job ${a.job}`), el("br"), snippet(hay, at, q.length)));
      }
    }
    $("search-status").textContent = `${hits} attempt${hits === 1 ? "" : "s"} match` + (hits > limit ? ` (first ${limit} shown)` : "");
  }
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); search($("search-input").value); });

  window.rsiReport = { openCell, openTask, openAttempts, search, ready: true };
  route();
})();
