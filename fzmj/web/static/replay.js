// Replay page: steps through the frames that fzmj-replay embedded (one per decision, one per hand end).
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("fzmj-data").textContent);
  FZ.meta = data.meta;
  const flat = []; // [hand, frame index, decision number in this page (1-based) or null] for every frame
  let n = 0;
  data.hands.forEach((h, hi) => h.frames.forEach((f, fi) => flat.push([hi, fi, f.step === null ? null : ++n])));
  const total = n; // decisions shown: a seat's view has no frames for other seats' hidden claim answers
  const root = document.querySelector("main");
  const pos = document.getElementById("pos");
  const slider = document.getElementById("slider");
  const events = document.getElementById("events");
  const state = { index: 0, lastRenderMs: 0, firstRenderAt: 0, bottom: data.view === null ? 0 : data.view, timer: null };
  const frameAt = (i) => data.hands[flat[i][0]].frames[flat[i][1]];
  const isCall = (f) => (f.action && f.action.action !== null && f.action.action >= 27 && f.action.action <= 60 && f.action.action !== 61);
  const isWinEnd = (i) => flat[i][2] === null && data.hands[flat[i][0]].result.winner !== null;
  const review = data.review || null;

  function hashOf(i) {
    const [hi, , d] = flat[i];
    return `#h${hi + 1}/${d === null ? "end" : "s" + d}`;
  }
  function indexOfHash(h) {
    const m = /^#h(\d+)\/(?:s(\d+)|end)$/.exec(h);
    if (!m) return -1;
    const hi = Number(m[1]) - 1;
    return m[2] ? flat.findIndex(([h2, , d]) => h2 === hi && d === Number(m[2])) : flat.findIndex(([h2, , d], i) => h2 === hi && d === null);
  }

  // the event list, written once; the current entry is marked on each step
  events.innerHTML = flat.map(([hi, , d], i) => {
    const f = frameAt(i);
    const what = d === null ? `hand ${hi + 1} ends: ${data.hands[hi].result.winner === null ? "drawn" : "seat " + data.hands[hi].result.winner + " wins"}` : `seat ${f.action.seat}: ${f.action.name}`;
    const dis = review && f.step !== null && review.at[f.step] && review.at[f.step].agree === false ? " dis" : "";
    return `<a href="${hashOf(i)}" data-i="${i}" class="${isCall(f) || d === null ? "call" : ""}${dis}">h${hi + 1} ${d === null ? "end" : "#" + d} · ${esc(what)}</a>`;
  }).join("");
  let current = null;

  function goto(i) {
    const t0 = performance.now();
    state.index = Math.max(0, Math.min(flat.length - 1, i));
    const [hi, , d] = flat[state.index];
    const hand = data.hands[hi];
    const f = frameAt(state.index);
    renderTable(root, f, { view: data.view === null ? null : data.view, result: hand.result, handInfo: { count: data.hands.length }, bottomSeat: state.bottom, extraSide: review ? reviewBox(f.step) : "" });
    pos.textContent = `hand ${hi + 1} / ${data.hands.length} · ${d === null ? "end of hand" : `decision ${d} / ${total}`}`;
    slider.value = state.index;
    if (current) current.classList.remove("cur");
    current = events.querySelector(`a[data-i="${state.index}"]`);
    if (current) { current.classList.add("cur"); if (current.scrollIntoViewIfNeeded) current.scrollIntoViewIfNeeded(false); }
    if (location.hash !== hashOf(state.index)) history.replaceState(null, "", hashOf(state.index));
    document.body.dataset.hand = hi;
    document.body.dataset.frame = flat[state.index][1];
    document.body.dataset.step = f.step === null ? "end" : f.step;
    document.body.dataset.decision = d === null ? "end" : d;
    void root.offsetHeight; // force style and layout, so the figure includes them
    state.lastRenderMs = performance.now() - t0;
  }

  function reviewBox(step) {
    if (step === null) return reviewSummary();
    const r = review.at[step];
    if (!r) return "";
    const rows = r.top.map(([a, p, name]) => `<tr class="${a === r.played ? "played" : ""}"><td>${esc(name)}${a === r.played ? " ◀ played" : ""}</td><td class="num">${(100 * p).toFixed(1)}%</td><td><span class="bar" style="width:${Math.round(80 * p)}px"></span></td></tr>`).join("");
    const value = r.value === null || r.value === undefined ? "" : `<p class="note">value estimate ${r.value.toFixed(3)}</p>`;
    return `<div class="box review" data-agree="${r.agree ? 1 : 0}"><h3>review: ${esc(review.agent)} for seat ${review.seat}</h3>
      <p>${r.agree ? "agrees with the play" : `<span class="dis">disagrees</span>: would play <b>${esc(r.best_name)}</b>`}</p>
      <table>${rows}</table>${value}${dangerStrip(r.danger)}</div>`;
  }
  function reviewSummary() {
    if (!review) return "";
    const worst = review.largest.map(([step, gap, played, best]) => {
      const i = flat.findIndex((_, j) => frameAt(j).step === step);
      return i < 0 ? "" : `<li><a href="${hashOf(i)}">${hashOf(i).slice(1)}</a>: played ${esc(played)}, agent ${esc(best)} (Δp ${(100 * gap).toFixed(0)}%)</li>`;
    }).join("");
    return `<div class="box review summary"><h3>review summary</h3><p>${esc(review.agent)} agrees on <b>${review.agree}</b> of ${review.decisions} decisions of seat ${review.seat} (${(100 * review.agree / Math.max(1, review.decisions)).toFixed(1)}%)</p><ol>${worst}</ol></div>`;
  }

  function handStart(hi) { return flat.findIndex(([h]) => h === hi); }
  function nextHand() {
    const hi = flat[state.index][0];
    goto(hi + 1 < data.hands.length ? handStart(hi + 1) : flat.length - 1);
  }
  function prevHand() {
    const [hi, fi] = flat[state.index];
    goto(fi > 0 || hi === 0 ? handStart(hi) : handStart(hi - 1));
  }
  function nextCall() {
    for (let i = state.index + 1; i < flat.length; i++) if (isCall(frameAt(i)) || isWinEnd(i)) return goto(i);
    goto(flat.length - 1);
  }
  function toggleAutoplay() {
    const b = document.getElementById("autoplay");
    if (state.timer) { clearInterval(state.timer); state.timer = null; b.textContent = "▶ play"; return; }
    b.textContent = "❚❚ pause";
    const speed = Number(document.getElementById("speed").value);
    state.timer = setInterval(() => { if (state.index >= flat.length - 1) toggleAutoplay(); else goto(state.index + 1); }, speed);
  }
  const moves = {
    next: () => goto(state.index + 1), prev: () => goto(state.index - 1), nextHand, prevHand, nextCall,
    end: () => goto(flat.length - 1), start: () => goto(0),
  };
  document.querySelectorAll("[data-move]").forEach((b) => b.addEventListener("click", () => moves[b.dataset.move]()));
  document.getElementById("autoplay").addEventListener("click", toggleAutoplay);
  document.getElementById("speed").addEventListener("change", () => { if (state.timer) { toggleAutoplay(); toggleAutoplay(); } });
  slider.max = flat.length - 1;
  slider.addEventListener("input", () => goto(Number(slider.value)));
  events.addEventListener("click", (e) => { const a = e.target.closest("a[data-i]"); if (a) { e.preventDefault(); goto(Number(a.dataset.i)); } });
  const vs = document.getElementById("viewseat");
  if (data.view === null) {
    vs.innerHTML = [0, 1, 2, 3].map((s) => `<option value="${s}">seat ${s}</option>`).join("");
    vs.addEventListener("change", () => { state.bottom = Number(vs.value); goto(state.index); });
  } else {
    document.getElementById("viewlabel").hidden = true;
  }
  const keys = {
    ArrowRight: "next", ArrowLeft: "prev", ArrowDown: "nextHand", PageDown: "nextHand", ArrowUp: "prevHand", PageUp: "prevHand",
    End: "end", Home: "start", n: "next", p: "prev", N: "nextHand", P: "prevHand", c: "nextCall",
  };
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.target.tagName === "SELECT" || e.target.tagName === "INPUT") return;
    if (e.key === " ") { e.preventDefault(); toggleAutoplay(); return; }
    const m = keys[e.key];
    if (m) { e.preventDefault(); moves[m](); }
  });
  window.addEventListener("hashchange", () => { const i = indexOfHash(location.hash); if (i >= 0 && i !== state.index) goto(i); });
  window.fzmj = { goto, moves, state, total: flat.length, data, indexOfHash };
  const start = indexOfHash(location.hash);
  goto(start >= 0 ? start : 0);
  state.firstRenderAt = performance.now();
})();
