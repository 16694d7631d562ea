// Play page: shows the server's state (the person's view) and sends the person's choices.
// The legal actions come from the server (the engine's mask); nothing is decided here.
"use strict";

(function () {
  FZ.meta = JSON.parse(document.getElementById("fzmj-meta").textContent);
  const root = document.querySelector("main");
  const actions = document.getElementById("actions");
  const error = document.getElementById("error");
  const prompt = document.getElementById("prompt");
  const countdown = document.getElementById("countdown");
  const timerInput = document.getElementById("timer");
  const st = { state: null, busy: false, timer: null, lastRenderMs: 0 };

  async function post(path, body) {
    st.busy = true;
    try {
      const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json", "X-Fzmj-Token": FZ.meta.token }, body: JSON.stringify(body) });
      const j = await r.json();
      if (!r.ok) { error.textContent = j.error || `error ${r.status}`; if (j.state) show(j.state); return; }
      error.textContent = "";
      show(j);
    } catch (e) {
      error.textContent = `the server did not answer (${e})`;
    } finally {
      st.busy = false;
    }
  }

  function act(a) {
    if (!st.busy && st.state) post("/act", { action: a, version: st.state.version });
  }

  function clearTimer() {
    if (st.timer) { clearInterval(st.timer); st.timer = null; }
    countdown.textContent = "";
  }

  // A claim window times out to "pass" only when the person set a timer (the server checks it like any click).
  function startTimer(s) {
    const secs = Number(timerInput.value);
    if (!(secs > 0) || !s.frame.claim || !s.legal.some(([a]) => a === 61)) return;
    let left = secs;
    countdown.textContent = `pass in ${left} s`;
    const version = s.version;
    st.timer = setInterval(() => {
      left -= 1;
      if (!st.state || st.state.version !== version) { clearTimer(); return; }
      if (left <= 0) { clearTimer(); act(61); } else countdown.textContent = `pass in ${left} s`;
    }, 1000);
  }

  function show(s) {
    const t0 = performance.now();
    clearTimer();
    st.state = s;
    const f = s.frame;
    const discards = new Set(s.legal.filter(([a]) => a < 27).map(([a]) => a));
    renderTable(root, f, { view: s.seat, result: s.result, clickable: discards, handInfo: { count: s.hands } });
    root.querySelectorAll(".tile.click").forEach((el) => el.addEventListener("click", () => act(Number(el.dataset.action))));
    const btns = s.legal.map(([a, name]) => `<button data-action="${a}" class="${a === 59 || a === 60 ? "hu" : ""}">${esc(name)}</button>`);
    if (s.hand_over) btns.push('<button id="next-hand">' + (s.done ? "see the final scores" : "next hand ▶") + "</button>");
    actions.innerHTML = btns.join("");
    actions.querySelectorAll("button[data-action]").forEach((b) => b.addEventListener("click", () => act(Number(b.dataset.action))));
    const nh = document.getElementById("next-hand");
    if (nh) nh.addEventListener("click", () => post("/next", { version: s.version }));
    if (s.done) prompt.textContent = `game over — final scores ${s.scores.join(", ")}` + (s.saved ? ` — record saved to ${s.saved}` : "");
    else if (s.hand_over) prompt.textContent = "hand over";
    else if (s.your_turn) prompt.textContent = f.claim ? "claim window: your answer" : "your move";
    else prompt.textContent = "waiting";
    document.getElementById("pos").textContent = `hand ${f.hand + 1} / ${s.hands} · you are seat ${s.seat} · scores ${s.scores.join(" / ")}`;
    document.getElementById("log").innerHTML = s.log.slice().reverse().map((l) => `<div>${esc(l)}</div>`).join("");
    document.body.dataset.version = s.version;
    document.body.dataset.done = s.done ? "1" : "0";
    document.body.dataset.handOver = s.hand_over ? "1" : "0";
    if (s.your_turn) startTimer(s);
    st.lastRenderMs = performance.now() - t0;
  }

  window.fzmj = { st, act, show };
  fetch("/state", { headers: { "X-Fzmj-Token": FZ.meta.token } }).then((r) => r.json()).then(show).catch((e) => { error.textContent = `cannot load the state (${e})`; });
})();
