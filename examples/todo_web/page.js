// The todo app's own panel of the page: the list (from /app/events) and the person's controls
// (POST /app/dispatch). The rest of the page (the requests waiting for the person, the
// activity, the tools, the context) is the library's.
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

})();
