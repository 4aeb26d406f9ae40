/*
 * foldkit-agent WebMCP bridge (served by foldkit_agent.adapters.web.webmcp).
 *
 * Registers every capability the server currently offers as a WebMCP tool of this page and
 * keeps that set in step with the server:
 *
 *   - tools come from GET <base>capabilities (name, title, description, inputSchema,
 *     annotations.readOnlyHint);
 *   - each is registered with modelContext.registerTool(tool, {signal}), using
 *     document.modelContext, or navigator.modelContext on older implementations;
 *   - GET <base>events (server-sent events) says when availability changed; the bridge then
 *     aborts the registrations that are gone or changed and registers the new ones. A tool
 *     whose own call is still running stays registered until that call has answered (a call
 *     that makes its tool unavailable, such as deleting the selected todo, would otherwise
 *     lose its answer: the page's model context drops the pending execution of a tool whose
 *     registration is aborted);
 *   - every execute(input) is POSTed to <base>invoke/<name> with the session's CSRF token,
 *     and the server's answer (an MCP CallToolResult-shaped object) is returned unchanged.
 *     A call that waits for the person's approval in the page is answered 202 at once
 *     (structuredContent.status "waiting", with its call id): execute then waits for the
 *     "ended" event of that id on <base>events (or polls every few seconds) and returns the
 *     call's own answer from <base>calls/<id>, so the agent sees one answer and no request
 *     stays open while the person decides.
 *   - every event of that stream is also dispatched on window as "foldkit-agent:event"
 *     ({detail: {type}}), so the page's own view can follow the same one stream.
 *
 * The bridge decides nothing: the server validates the input, checks availability,
 * authorizes and audits every call. A failed registration or a failed refresh is recorded
 * (window.foldkitAgent.errors()) and logged, never thrown.
 *
 * <base> is the directory this script was loaded from (…/agent/), or the script tag's
 * data-base attribute.
 */
(function () {
  "use strict";
  if (window.foldkitAgent) return; // loaded twice: the first copy keeps working

  var script = document.currentScript;
  var base = new URL(
    (script && script.dataset && script.dataset.base) || ".",
    (script && script.src) || location.href
  );

  var registered = new Map(); // name -> {controller: AbortController, key: string}
  var runningCalls = new Map(); // name -> calls of that tool not yet answered
  var errors = [];
  var syncs = 0;
  var csrf = null;
  var running = null;
  var again = false;
  var waiters = new Map(); // parked call id -> wakes its execute() to read the answer
  var POLL_MS = 3000;
  var resolveReady;
  var ready = new Promise(function (resolve) { resolveReady = resolve; });

  function modelContext() {
    var mc = document.modelContext || navigator.modelContext || null;
    return mc && typeof mc.registerTool === "function" ? mc : null;
  }

  function note(name, error) {
    var entry = { name: name, error: String((error && (error.name || error.message)) || error) };
    errors.push(entry);
    if (errors.length > 50) errors.shift();
    if (window.console) console.warn("foldkit-agent bridge:", entry.name, entry.error);
  }

  function failure(text) {
    return { content: [{ type: "text", text: text }], isError: true };
  }

  async function fetchToken() {
    try {
      var r = await fetch(new URL("session", base), { credentials: "same-origin", cache: "no-store" });
      if (!r.ok) return null;
      var body = await r.json();
      return typeof body.csrfToken === "string" ? body.csrfToken : null;
    } catch (e) {
      return null;
    }
  }

  function wireInput(input) {
    // The transport may hand the input over as JSON text; the server judges the value.
    if (typeof input === "string") {
      try { return JSON.parse(input); } catch (e) { return input; }
    }
    return input === undefined || input === null ? {} : input;
  }

  async function invoke(name, input) {
    runningCalls.set(name, (runningCalls.get(name) || 0) + 1);
    try {
      return await post(name, input);
    } finally {
      var left = runningCalls.get(name) - 1;
      if (left > 0) runningCalls.set(name, left);
      else runningCalls.delete(name);
      schedule(); // what the call changed; and a removal it held back
    }
  }

  async function post(name, input) {
    var url = new URL("invoke/" + encodeURIComponent(name), base);
    var body;
    try {
      body = JSON.stringify(wireInput(input));
    } catch (e) {
      return failure("The input for " + name + " could not be encoded as JSON. Nothing was applied.");
    }
    for (var attempt = 0; attempt < 2; attempt++) {
      if (!csrf) csrf = await fetchToken();
      var response;
      try {
        response = await fetch(url, {
          method: "POST",
          credentials: "same-origin",
          cache: "no-store",
          headers: { "content-type": "application/json", "X-CSRF-Token": csrf || "" },
          body: body,
        });
      } catch (e) {
        return failure("The page could not reach the application, so whether " + name + " was applied is unknown.");
      }
      var result = null;
      try { result = await response.json(); } catch (e) { result = null; }
      var sc = result && result.structuredContent;
      if (response.status === 403 && sc && sc.error === "csrf" && attempt === 0) {
        csrf = null; // the session changed: fetch a fresh token and retry (nothing was applied)
        continue;
      }
      if (response.status === 202 && sc && sc.status === "waiting" && typeof sc.call === "string") {
        return await answerOf(name, sc.call);
      }
      if (result && Array.isArray(result.content)) return result;
      return failure("The application answered " + name + " with HTTP " + response.status + " and no result.");
    }
    return failure("The page's security token was refused; reload the page. Nothing was applied.");
  }

  function woken(id) {
    return new Promise(function (resolve) {
      var timer = setTimeout(wake, POLL_MS);
      function wake() {
        clearTimeout(timer);
        if (waiters.get(id) === wake) waiters.delete(id);
        resolve();
      }
      waiters.set(id, wake);
    });
  }

  // A parked call: wait until it ended (its "ended" event, or the next poll), then read its
  // answer, which the server gives once.
  async function answerOf(name, id) {
    var url = new URL("calls/" + encodeURIComponent(id), base);
    for (var failed = 0; failed < 20; ) {
      await woken(id);
      var response;
      try {
        response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      } catch (e) {
        failed += 1; // the server is out of reach for now: ask again later
        continue;
      }
      if (response.status === 202) continue;
      var result = null;
      try { result = await response.json(); } catch (e) { result = null; }
      if (response.ok && result && Array.isArray(result.content)) return result;
      break;
    }
    return failure("The answer of " + name + " could not be read, so whether it was applied is unknown.");
  }

  function keyOf(cap) {
    return JSON.stringify([cap.title, cap.description, cap.inputSchema, cap.annotations]);
  }

  function toolOf(cap) {
    var tool = {
      name: cap.name,
      description: cap.description,
      inputSchema: cap.inputSchema,
      annotations: { readOnlyHint: !!(cap.annotations && cap.annotations.readOnlyHint) },
      execute: invoke.bind(null, cap.name),
    };
    if (typeof cap.title === "string") tool.title = cap.title;
    return tool;
  }

  async function syncOnce(reregister) {
    var mc = modelContext();
    if (!mc) return;
    var caps;
    try {
      var r = await fetch(new URL("capabilities", base), { credentials: "same-origin", cache: "no-store" });
      if (!r.ok) { note("capabilities", "HTTP " + r.status); return; }
      caps = (await r.json()).capabilities;
      if (!Array.isArray(caps)) return;
    } catch (e) {
      note("capabilities", e); // keep what is registered; the next change event retries
      return;
    }
    var wanted = new Map();
    caps.forEach(function (c) { wanted.set(c.name, c); });
    // Abort first, so a changed tool's name is free before it is registered again.
    Array.from(registered.entries()).forEach(function (entry) {
      var cap = wanted.get(entry[0]);
      if (runningCalls.has(entry[0])) return; // removed once its call has answered
      if (reregister || !cap || keyOf(cap) !== entry[1].key) {
        entry[1].controller.abort();
        registered.delete(entry[0]);
      }
    });
    for (var i = 0; i < caps.length; i++) {
      var cap = caps[i];
      if (registered.has(cap.name)) continue;
      var controller = new AbortController();
      registered.set(cap.name, { controller: controller, key: keyOf(cap) });
      try {
        await mc.registerTool(toolOf(cap), { signal: controller.signal });
      } catch (e) {
        registered.delete(cap.name);
        controller.abort();
        note(cap.name, e);
      }
    }
    syncs += 1;
    resolveReady();
    window.dispatchEvent(new CustomEvent("foldkit-agent:sync", { detail: { tools: names() } }));
  }

  function names() {
    return Array.from(registered.keys());
  }

  // One sync at a time; requests arriving meanwhile fold into one more pass.
  function schedule(reregister) {
    if (running) {
      if (reregister) again = "reregister";
      else if (!again) again = true;
      return running;
    }
    running = (async function () {
      var mode = !!reregister;
      try {
        do {
          again = false;
          try { await syncOnce(mode); } catch (e) { note("sync", e); }
          mode = again === "reregister";
        } while (again);
      } finally {
        running = null;
      }
    })();
    return running;
  }

  // Every event of the stream is told to the page too (a page showing the approvals and the
  // activity refreshes on them), so one tab holds one stream.
  function tell(ev) {
    window.dispatchEvent(new CustomEvent("foldkit-agent:event", { detail: { type: ev.type } }));
  }

  function listen() {
    if (typeof EventSource !== "function") return;
    var events = new EventSource(new URL("events", base));
    ["ready", "change", "approvals", "ended", "activity"].forEach(function (type) {
      events.addEventListener(type, tell);
    });
    events.addEventListener("ready", function () { schedule(); });
    events.addEventListener("change", function (ev) {
      var data = {};
      try { data = JSON.parse(ev.data); } catch (e) { data = {}; }
      if (data.capabilities !== false) schedule();
    });
    events.addEventListener("ended", function (ev) {
      var data = {};
      try { data = JSON.parse(ev.data); } catch (e) { data = {}; }
      var wake = waiters.get(data.id);
      if (wake) wake();
    });
  }

  // The session's token first: its cookie makes this page's own approvals reach its stream.
  async function start() {
    schedule();
    if (!csrf) csrf = await fetchToken();
    listen();
  }

  window.foldkitAgent = Object.freeze({
    base: base.href,
    ready: ready,
    sync: function (options) { return schedule(!!(options && options.reregister)); },
    tools: names,
    errors: function () { return errors.slice(); },
    syncs: function () { return syncs; },
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start, { once: true });
  } else {
    start();
  }
})();
