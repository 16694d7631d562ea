// Play page: shows the server's state (the person's view) and sends the person's choices.
// The legal actions come from the server (the engine's mask); nothing is decided here. Every
// request carries the session token the server printed in its address.
"use strict";

(function () {
  FZ.meta = JSON.parse(document.getElementById("fzmj-meta").textContent);
  document.body.classList.add("play");
  const root = document.querySelector("main");
  const $ = (id) => document.getElementById(id);
  const actions = $("actions"), error = $("error"), prompt = $("prompt"), countdown = $("countdown");
  const bar = $("timerbar");
  const HU = 59, ROB = 60, PASS = 61;
  const st = { state: null, busy: false, timer: null, lastRenderMs: 0, animating: false, paced: 0, popups: [] };
  // soft errors: a refused request is answered 200 with {error, status, state}, so that a stale click
  // (another tab moved the game on) is no console error
  const headers = { "Content-Type": "application/json", "X-Fzmj-Token": FZ.meta.token, "X-Fzmj-Soft-Errors": "1" };
  const withToken = (path) => `${path}?token=${encodeURIComponent(FZ.meta.token)}`;

  // settings: kept in this browser, applied at once
  const settings = { timer: 0, pace: 300, autoWin: false, noCalls: false, autoPass: false, hint: false };
  try { Object.assign(settings, JSON.parse(localStorage.getItem("fzmj-play-settings") || "{}")); } catch (e) { /* a fresh start */ }
  const inputs = { timer: $("timer"), pace: $("pace"), autoWin: $("auto-win"), noCalls: $("no-calls"), autoPass: $("auto-pass"), hint: $("hint") };
  $("hint-label").hidden = !FZ.meta.reviewer;
  for (const [k, el] of Object.entries(inputs)) {
    if (el.type === "checkbox") el.checked = !!settings[k]; else el.value = settings[k];
    el.addEventListener(el.type === "checkbox" ? "change" : "input", () => {
      settings[k] = el.type === "checkbox" ? el.checked : Math.max(0, Number(el.value) || 0);
      try { localStorage.setItem("fzmj-play-settings", JSON.stringify(settings)); } catch (e) { /* private mode */ }
      if (st.state && !st.animating) { showHint(st.state); decide(st.state); } // applies to this decision at once
    });
  }

  async function request(path, body) {
    st.busy = true;
    try {
      const r = body === undefined ? await fetch(withToken(path), { headers }) : await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
      const j = await r.json();
      const status = j.status || r.status;
      if (status === 409 && j.state) { // the game moved on (another tab, a reload): show it, no alarm
        error.textContent = "";
        countdown.textContent = "the game had moved on; the table is up to date";
        await show(j.state, false);
        return;
      }
      if (j.error || !r.ok) { error.textContent = j.error || `error ${status}`; if (j.state) await show(j.state, false); return; }
      error.textContent = "";
      await show(j, body !== undefined);
    } catch (e) {
      error.textContent = `the server did not answer (${e})`;
    } finally {
      st.busy = false;
    }
  }

  function act(a) {
    if (!st.busy && !st.animating && st.state) { clearTimer(); request("/act", { action: a, version: st.state.version }); }
  }

  function clearTimer() {
    if (st.timer) { clearInterval(st.timer); st.timer = null; }
    bar.hidden = true;
    countdown.textContent = "";
  }

  const legalSet = (s) => new Set(s.legal.map(([a]) => a));
  const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

  // What the toggles or the timer answer for the person. A win is never passed by them.
  function automatic(s) {
    const L = legalSet(s);
    const win = L.has(HU) ? HU : L.has(ROB) ? ROB : null;
    if (win !== null) return settings.autoWin ? win : null;
    if (!s.frame.claim || !L.has(PASS)) return null;
    if (settings.noCalls) return PASS;
    if (settings.autoPass && [...L].every((a) => a === PASS || (a >= 27 && a <= 29))) return PASS;
    return null;
  }
  function onTimeout(s) {
    const L = legalSet(s);
    if (L.has(HU) || L.has(ROB)) { countdown.textContent = "time is up — a win is never passed for you: choose"; return; }
    if (s.frame.claim && L.has(PASS)) return act(PASS);
    const drawn = s.frame.seats[s.seat].last_draw;
    if (drawn !== null && drawn !== undefined && L.has(drawn)) return act(drawn);
    const discards = [...L].filter((a) => a < 27);
    if (discards.length) act(discards[discards.length - 1]);
  }

  function decide(s) {
    clearTimer();
    if (!s.your_turn) return;
    const auto = automatic(s);
    if (auto !== null) { setTimeout(() => act(auto), 0); return; }
    const secs = settings.timer;
    if (!(secs > 0)) return;
    const t0 = performance.now(), version = s.version;
    bar.hidden = false;
    const fill = bar.firstElementChild;
    st.timer = setInterval(() => {
      if (!st.state || st.state.version !== version) { clearTimer(); return; }
      const left = secs - (performance.now() - t0) / 1000;
      fill.style.transform = `scaleX(${Math.max(0, left / secs)})`;
      countdown.textContent = `${Math.ceil(Math.max(0, left))} s`;
      if (left <= 0) { clearTimer(); onTimeout(s); }
    }, 100);
  }

  function buttonFor(a, name, f) {
    const tiles = actionTiles(a, f).map((k) => tile(k, "small")).join("");
    let label = name;
    if (a === HU) label = "胡 win";
    else if (a === ROB) label = "抢金 rob the gold";
    else if (a === PASS) label = "pass 过";
    else if (a >= 27 && a <= 29) label = "吃 chi";
    else if (a === 30) label = "碰 peng";
    else if (a >= 31 && a <= 58) label = "杠 kong";
    return `<button data-action="${a}" class="${a === HU || a === ROB ? "hu" : ""}" title="${esc(name)}">${esc(label)} ${tiles}</button>`;
  }

  function standings(s) {
    const order = [0, 1, 2, 3].sort((a, b) => s.scores[b] - s.scores[a] || a - b);
    const rows = order.map((p, i) => `<tr><td>${i + 1}</td><td>${seatName(p)}${p === s.seat ? " (you)" : ""}</td><td class="num">${s.scores[p] > 0 ? "+" : ""}${s.scores[p]}</td></tr>`).join("");
    const saved = s.saved ? `<p class="note">record saved to <code>${esc(s.saved)}</code></p>` : "";
    const failed = s.save_error ? `<p class="error">${esc(s.save_error)} — download it here</p>` : "";
    return `<div class="box standings"><h3>final standings</h3><table><tr><th>#</th><th>seat</th><th>score</th></tr>${rows}</table>${saved}${failed}
      <p><a id="record-link" href="${withToken("/record")}&download=1" download="${esc(FZ.meta.record_name || "fzmj-play.json")}">download the record</a>
      <a id="replay-link" href="${withToken("/replay")}" target="_blank" rel="noopener">open its replay</a></p></div>`;
  }

  function render(s) {
    const t0 = performance.now();
    const f = s.frame;
    const discards = new Set(s.legal.filter(([a]) => a < 27).map(([a]) => a));
    const extra = s.done ? standings(s) : "";
    renderTable(root, f, { view: s.seat, result: s.result, clickable: discards, handInfo: { count: s.hands }, extraSide: extra });
    root.querySelectorAll(".tile.click").forEach((el) => {
      el.addEventListener("click", () => act(Number(el.dataset.action)));
      el.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); act(Number(el.dataset.action)); } });
    });
    const btns = s.legal.filter(([a]) => a >= 27).map(([a, name]) => buttonFor(a, name, f));
    if (s.hand_over) btns.push(`<button id="next-hand">${s.last_hand ? "final standings ▶" : "next hand ▶"}</button>`);
    actions.innerHTML = btns.join("");
    actions.querySelectorAll("button[data-action]").forEach((b) => b.addEventListener("click", () => act(Number(b.dataset.action))));
    const nh = $("next-hand");
    if (nh) nh.addEventListener("click", () => { if (!st.busy) request("/next", { version: s.version }); });
    if (s.done) prompt.textContent = `game over — final scores ${s.scores.join(", ")}`;
    else if (s.hand_over) prompt.textContent = s.last_hand ? "the last hand is over" : "hand over";
    else if (s.your_turn) prompt.textContent = f.claim ? `claim window: seat ${f.claim.from} discarded ${FZ.meta.names[f.claim.tile]}` : discards.size ? "your move: tap a tile to discard it" : "your move";
    else prompt.textContent = "waiting";
    $("pos").textContent = `hand ${f.hand + 1} / ${s.hands} · you are seat ${s.seat} · scores ${s.scores.join(" / ")}`;
    $("log").innerHTML = s.log.slice().reverse().map((l) => `<div>${esc(l)}</div>`).join("");
    document.body.dataset.version = s.version;
    document.body.dataset.done = s.done ? "1" : "0";
    document.body.dataset.handOver = s.hand_over ? "1" : "0";
    document.documentElement.style.setProperty("--dock-h", `${$("dock").offsetHeight}px`);
    st.lastRenderMs = performance.now() - t0;
  }

  // The other seats' steps since the person's last action, one every `pace` ms, calls announced.
  async function animate(s) {
    const steps = (s.steps || []).filter((x) => x.frame);
    if (!(settings.pace > 0) || !steps.length) return;
    st.animating = true;
    actions.innerHTML = "";
    prompt.textContent = "the other seats play…";
    try {
      for (const step of steps) {
        renderTable(root, step.frame, { view: s.seat, handInfo: { count: s.hands }, popup: step.call, noSide: true });
        st.paced += 1;
        if (step.call) st.popups.push(step.call);
        if (step.lines.length) countdown.textContent = step.lines.join(" · ");
        await sleep(step.call ? Math.max(settings.pace, 700) : settings.pace);
      }
    } finally {
      st.animating = false;
      countdown.textContent = "";
    }
  }

  function showHint(s) {
    const h = s.hint, box = $("hintbox");
    if (!settings.hint || !h) { box.innerHTML = ""; return; }
    if (h.error) { box.textContent = `hint unavailable: ${h.error}`; return; }
    const top = h.top.map(([, p, name]) => `${esc(name)} ${(100 * p).toFixed(0)}%`).join(" · ");
    box.innerHTML = `${esc(h.agent)} would play: <b>${top}</b>${h.value === null ? "" : ` (value ${h.value.toFixed(2)})`}${dangerStrip(h.danger)}`;
  }

  async function show(s, paced = false) {
    clearTimer();
    if (paced) await animate(s);
    st.state = s;
    render(s);
    showHint(s);
    decide(s);
  }

  function refresh() { if (!st.busy && !st.animating) request("/state"); }
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
  window.addEventListener("focus", refresh);
  window.fzmj = { st, act, show, settings };
  request("/state");
})();
