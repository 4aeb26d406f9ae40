// The todo page: the list (from /app/events), the person's controls (POST /app/dispatch),
// the activity panel (from /app/activity), the agents' calls waiting for the person's
// approval (from /agent/events and /agent/approvals) and the tools the bridge offers a
// browser agent.
// Plain JavaScript, no dependencies.
(function () {
  "use strict";
  var token = document.querySelector('meta[name="csrf-token"]').content;
  var list = document.getElementById("todos");
  var errorBox = document.getElementById("error");
  var user = null;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A person's action is a Message, sent to the application like any click.
  async function send(message) {
    errorBox.textContent = "";
    var r = await fetch("/app/dispatch", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": token },
      body: JSON.stringify(message),
    });
    if (!r.ok) {
      var body = {};
      try { body = await r.json(); } catch (e) {}
      errorBox.textContent = body.error || ("HTTP " + r.status);
    }
  }

  function button(label, cls, message, name) {
    var b = el("button", cls, label);
    b.type = "button";
    if (name) b.setAttribute("aria-label", name);
    b.addEventListener("click", function () { send(message); });
    return b;
  }

  // -- the list ------------------------------------------------------------------------------

  function row(todo, selected) {
    var li = el("li", "todo");
    li.dataset.id = todo.id;
    li.dataset.testid = "todo";
    li.classList.toggle("completed", todo.completed);
    li.classList.toggle("selected", selected);
    if (selected) li.setAttribute("aria-current", "true");
    var box = el("input", "toggle");
    box.type = "checkbox";
    box.checked = todo.completed;
    box.setAttribute("aria-label", "done: " + todo.title);
    box.addEventListener("change", function () { send({ _tag: "ToggledTodo", id: todo.id }); });
    li.append(box, el("span", "title", todo.title));
    li.append(el("span", "badge " + (todo.completed ? "done" : "open"), todo.completed ? "done" : "to do"));
    if (selected) li.append(el("span", "badge selected", "selected"));
    if (!todo.saved) li.append(el("span", "badge pending", "saving…"));
    var actions = el("span", "actions");
    if (selected) {
      actions.append(button("Unselect", "unselect", { _tag: "ClearedSelection" }));
      if (user && user.canDelete) actions.append(button("Delete", "delete danger", { _tag: "RequestedDeleteTodo", id: todo.id }));
    } else {
      actions.append(button("Select", "select", { _tag: "SelectedTodo", id: todo.id }));
    }
    li.append(actions);
    return li;
  }

  function render(view) {
    user = view.user;
    document.getElementById("who").textContent = user ? "signed in as " + user.id : "not signed in";
    list.replaceChildren.apply(list, view.todos.map(function (t) { return row(t, view.selected === t.id); }));
    var done = view.todos.filter(function (t) { return t.completed; }).length;
    document.getElementById("counts").textContent = view.todos.length
      ? (view.todos.length - done) + " to do · " + done + " done" : "";
    document.getElementById("empty").hidden = view.todos.length > 0;
  }

  document.getElementById("new").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var input = ev.target.elements.title;
    var title = input.value.trim();
    if (!title) return;
    input.value = "";
    send({ _tag: "RequestedCreateTodo", title: title });
  });

  // The list renders from the application's own event stream: whoever changed the Model.
  var events = new EventSource("/app/events");
  events.addEventListener("state", function (ev) { render(JSON.parse(ev.data)); });

  // -- activity: who did what, from the audit log and the page's own actions -----------------

  var AGENTS = { webmcp: "Browser agent (WebMCP)", mcp: "MCP agent", a2a: "A2A agent", "agent-native": "Agent Native" };
  var REFUSED = {
    AgentAuthorizationError: "refused: not allowed",
    AgentCapabilityUnavailableError: "refused: not available now",
    AgentInvalidInputError: "refused: invalid input",
    AgentUnknownCapabilityError: "refused: no such capability",
    AgentCancelledError: "cancelled before sending",
    AgentHostError: "refused: the application failed",
  };
  var APPROVAL = { declined: "declined by the person", timeout: "refused: nobody answered in time", unavailable: "refused: no person could be asked" };
  var KEEP = 50;
  var activity = document.getElementById("activity-list");

  function actor(item) {
    if (item.who === "person") return item.principal ? "You (" + item.principal + ")" : "You";
    var name = AGENTS[item.transport] || item.transport + " agent";
    return item.principal ? name + " as " + item.principal : name;
  }

  function decision(item) {
    if (item.decision === "dispatched") {
      var text = item.outcome === "failed" ? "sent; the application reported a failure" : "done";
      if (item.approval === "approved") text += ", approved by " + (item.approvedBy || "a person");
      return ["ok", text];
    }
    if (item.decision === "unknown") return ["unknown", "outcome unknown: cancelled after sending"];
    if (item.outcome === "AgentCompletionTimeoutError") return ["unknown", "sent; no result in time"];
    return ["refused", APPROVAL[item.approval] || REFUSED[item.outcome] || "refused (" + item.outcome + ")"];
  }

  function entry(item) {
    var li = el("li");
    li.dataset.testid = "activity-item";
    li.dataset.who = item.who;
    li.dataset.transport = item.transport;
    li.dataset.decision = item.decision;
    var head = el("div", "line");
    head.append(el("span", "actor " + item.who, actor(item)), el("code", "", item.capability));
    var d = decision(item);
    var line = el("div", "line");
    var at = el("time", "", new Date(item.at).toLocaleTimeString());
    at.dateTime = item.at;
    line.append(el("span", "decision " + d[0], d[1]), at);
    li.append(head, line);
    return li;
  }

  function showActivity(batch) {
    batch.items.forEach(function (item) { activity.prepend(entry(item)); });
    while (activity.children.length > KEEP) activity.lastElementChild.remove();
    document.getElementById("activity-empty").hidden = activity.children.length > 0;
  }

  var feed = new EventSource("/app/activity");
  feed.addEventListener("activity", function (ev) { showActivity(JSON.parse(ev.data)); });
  feed.addEventListener("open", function () { activity.replaceChildren(); });

  // -- approval: an agent's call that needs the person's OK waits until they answer here -----
  // What it would change is computed by the application (a preview), not by the agent.

  var approvalBox = document.getElementById("approvals");
  var approvalList = document.getElementById("approval-list");

  async function answer(id, approve) {
    var r = await fetch("/agent/approvals/" + encodeURIComponent(id), {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": token },
      body: JSON.stringify({ approve: approve }),
    });
    if (!r.ok) errorBox.textContent = "The answer was not taken (HTTP " + r.status + ").";
  }

  function request(req) {
    var box = el("div", "approval");
    box.dataset.testid = "approval";
    box.dataset.capability = req.capability;
    var actions = el("div", "actions");
    [["Approve", "primary", true], ["Decline", "danger", false]].forEach(function (b) {
      var choice = el("button", b[1], b[0]);
      choice.type = "button";
      choice.addEventListener("click", function () { answer(req.id, b[2]); });
      actions.append(choice);
    });
    box.append(el("pre", "", req.text), actions);
    return box;
  }

  function showApprovals(waiting) {
    approvalList.replaceChildren.apply(approvalList, waiting.map(request));
    approvalBox.hidden = waiting.length === 0;
  }

  var agentEvents = new EventSource("/agent/events");
  agentEvents.addEventListener("approvals", function (ev) { showApprovals(JSON.parse(ev.data).approvals); });
  agentEvents.addEventListener("ready", function () {
    fetch("/agent/approvals", { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (body) { showApprovals(body.approvals || []); });
  });

  // -- the tools the bridge registered ---------------------------------------------------------

  window.addEventListener("foldkit-agent:sync", function (ev) {
    var names = ev.detail.tools;
    var out = document.getElementById("tools");
    out.replaceChildren.apply(out, names.map(function (n) { return el("code", "chip", n); }));
    if (!names.length) out.textContent = "none";
  });
})();
