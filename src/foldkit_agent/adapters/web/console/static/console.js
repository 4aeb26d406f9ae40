// The console's behaviour: sign in, live refresh of the server-rendered parts, answers.
// Every piece of text arrives as HTML the server rendered with Jinja2's autoescaping; this
// script only swaps those parts in and posts the person's answers (JSON, with the CSRF token).
(function () {
  "use strict";
  var base = document.body.dataset.base;

  function meta(name) {
    var node = document.querySelector('meta[name="' + name + '"]');
    return node ? node.content : null;
  }

  async function post(path, body) {
    var headers = { "content-type": "application/json" };
    var token = meta("csrf-token");
    if (token) headers[meta("csrf-header")] = token;
    var r = await fetch(base + path, {
      method: "POST", credentials: "same-origin", headers: headers, body: JSON.stringify(body),
    });
    var data = {};
    try { data = await r.json(); } catch (e) {}
    return { ok: r.ok, data: data };
  }

  // -- sign-in ---------------------------------------------------------------------------------
  var form = document.getElementById("sign-in");
  if (form) {
    form.addEventListener("submit", async function (ev) {
      ev.preventDefault();
      var got = await post("/sign-in", { token: form.token.value });
      var back = new URLSearchParams(window.location.search).get("next");
      if (got.ok) { window.location.assign(back === "/" ? "/" : got.data.next); return; }
      form.querySelector(".error").textContent = got.data.error || "Sign-in failed.";
    });
    return;
  }
  var out = document.getElementById("sign-out");
  if (out) {
    out.addEventListener("click", async function () {
      var got = await post("/sign-out", {});
      window.location.assign(got.data.next || base);
    });
  }

  // -- live parts ------------------------------------------------------------------------------
  var list = document.getElementById("approval-list");
  function showApprovals(cards) {
    var keep = {};
    cards.forEach(function (card) { keep[card.key] = card; });
    list.querySelectorAll(".card-slot").forEach(function (slot) {
      var card = keep[slot.dataset.key];
      if (!card) { slot.remove(); return; }
      if (slot.dataset.version !== card.version) { slot.innerHTML = card.html; slot.dataset.version = card.version; }
      delete keep[slot.dataset.key];
    });
    cards.forEach(function (card) {
      if (!keep[card.key]) return;
      var slot = document.createElement("div");
      slot.className = "card-slot";
      slot.dataset.key = card.key;
      slot.dataset.version = card.version;
      slot.innerHTML = card.html;
      list.append(slot);
    });
    document.getElementById("pending-count").textContent = String(cards.length);
    document.getElementById("approvals-empty").hidden = cards.length > 0;
  }

  var refreshing = null, again = false;
  async function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = (async function () {
      var r = await fetch(base + "/parts", { credentials: "same-origin", cache: "no-store" });
      if (r.status === 401) { window.location.assign(base + "/sign-in"); return; }
      if (!r.ok) return;
      var parts = await r.json();
      showApprovals(parts.approvals);
      document.getElementById("activity-body").innerHTML = parts.activity;
      document.getElementById("context-body").innerHTML = parts.context;
    })();
    try { await refreshing; } catch (e) {} finally { refreshing = null; }
    if (again) { again = false; refresh(); }
  }

  // -- answers ---------------------------------------------------------------------------------
  list.addEventListener("click", async function (ev) {
    var button = ev.target.closest("button[data-answer]");
    if (!button) return;
    var card = button.closest(".approval");
    var error = card.querySelector(".error");
    var kind = button.dataset.answer;
    var body = { approve: kind !== "decline" };
    if (kind === "decline") {
      var message = card.querySelector("textarea.message");
      if (message && message.value.trim()) body.message = message.value.trim();
    }
    if (kind === "edit") {
      try { body.input = JSON.parse(card.querySelector("textarea.edited").value); }
      catch (e) { error.textContent = "The input is not valid JSON: " + e.message; return; }
    }
    card.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    var got = await post("/approvals/" + encodeURIComponent(button.dataset.key), body);
    if (!got.ok) {
      error.textContent = got.data.error || "The answer was not taken.";
      card.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
    }
    refresh();
  });

  var events = new EventSource(base + "/events");
  events.addEventListener("changed", refresh);
  events.addEventListener("ready", refresh);
})();
