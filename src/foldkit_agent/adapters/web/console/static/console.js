// The behaviour of the console and of the person's page: sign in, live refresh of the
// server-rendered parts, answers. Every piece of text arrives as HTML the server rendered with
// Jinja2's autoescaping; this script only swaps those parts in and posts the person's answers
// (JSON, with the CSRF token).
//
// The body's data says where things live: data-base (parts, events, sign-in, sign-out),
// data-answers (where approvals/<key> is posted; default data-base), data-session (where a
// page without a csrf-token meta reads its token), data-sign-in (where a signed-out page
// goes), and data-events="bridge" (the changes come from the WebMCP bridge's one event
// stream, as foldkit-agent:event window events, instead of a stream of this page's own).
(function () {
  "use strict";
  var data = document.body.dataset;
  var base = data.base;
  var answers = data.answers || base;
  var signIn = data.signIn || base + "/sign-in";

  function meta(name) {
    var node = document.querySelector('meta[name="' + name + '"]');
    return node ? node.content : null;
  }

  // Said to the person (the agent's refusal tells the agent what to do next).
  var STALE_NOTE = "Your approval was not carried out and nothing was sent: the application " +
    "changed after you were asked, so the request no longer matched what it would do. " +
    "The agent has been told; if it asks again, you will see the new request.";
  var csrf = meta("csrf-token") ? { token: meta("csrf-token"), header: meta("csrf-header") } : null;

  async function token() {
    if (csrf || !data.session) return csrf;
    try {
      var r = await fetch(data.session, { credentials: "same-origin", cache: "no-store" });
      var body = await r.json();
      if (r.ok && typeof body.csrfToken === "string") csrf = { token: body.csrfToken, header: body.csrfHeader };
    } catch (e) {}
    return csrf;
  }

  async function post(url, body) {
    for (var attempt = 0; attempt < 2; attempt++) {
      var headers = { "content-type": "application/json" };
      var t = await token();
      if (t) headers[t.header] = t.token;
      var r = await fetch(url, {
        method: "POST", credentials: "same-origin", headers: headers, body: JSON.stringify(body),
      });
      var got = {};
      try { got = await r.json(); } catch (e) {}
      var sc = got.structuredContent;
      if (r.status === 403 && sc && sc.error === "csrf" && data.session && attempt === 0) {
        csrf = null; // the session changed: read the token again (nothing was applied)
        continue;
      }
      return { ok: r.ok, data: got, text: (sc && sc.message) || got.error };
    }
  }

  // -- sign-in ---------------------------------------------------------------------------------
  var form = document.getElementById("sign-in");
  if (form) {
    form.addEventListener("submit", async function (ev) {
      ev.preventDefault();
      var got = await post(base + "/sign-in", { token: form.token.value });
      var back = new URLSearchParams(window.location.search).get("next");
      if (got.ok) { window.location.assign(back === "/" ? "/" : got.data.next); return; }
      form.querySelector(".error").textContent = got.text || "Sign-in failed.";
    });
    return;
  }
  var out = document.getElementById("sign-out");
  if (out) {
    out.addEventListener("click", async function () {
      var got = await post(base + "/sign-out", {});
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
      if (r.status === 401) { window.location.assign(signIn); return; }
      if (!r.ok) return;
      var parts = await r.json();
      showApprovals(parts.approvals);
      document.getElementById("activity-body").innerHTML = parts.activity;
      document.getElementById("context-body").innerHTML = parts.context;
      var tools = document.getElementById("tools-body");
      if (tools && typeof parts.tools === "string") tools.innerHTML = parts.tools;
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
    var got = await post(answers + "/approvals/" + encodeURIComponent(button.dataset.key), body);
    // an approval that sent nothing (the application changed meanwhile) says so
    var note = document.getElementById("answer-note");
    if (note) note.textContent = got.ok && got.data.reason === "stale" ? STALE_NOTE : "";
    if (!got.ok) {
      error.textContent = got.text || "The answer was not taken.";
      card.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
    }
    refresh();
  });

  if (data.events === "bridge") {
    window.addEventListener("foldkit-agent:event", refresh);
    refresh();
  } else {
    var events = new EventSource(base + "/events");
    events.addEventListener("changed", refresh);
    events.addEventListener("ready", refresh);
  }
})();
