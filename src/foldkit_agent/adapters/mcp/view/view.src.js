// The generated view of an application, as an MCP Apps host renders it (a sandboxed frame in
// a chat). It talks to the host only through ext-apps' App: it reads the context resource,
// offers each capability as a form built from its input schema, calls the tool through the
// host (marked as the view's call, so the audit tells a person's click from the model's) and
// shows a refusal under the form it answers. Built into view.js by esbuild (see the Makefile's
// `view` target); everything it shows is set as text, never as markup.
import { App } from "@modelcontextprotocol/ext-apps";

const ACTOR_META = "foldkit/actor";
const AVAILABLE_META = "foldkit/available";
const CONTEXT_URI = "agent://context";

const config = JSON.parse(document.getElementById("foldkit-view").textContent);
const app = new App({ name: "foldkit-view", version: "1.0.0" }, {});
const forms = new Map();

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function words(name) {
  const spaced = String(name).replace(/_/g, " ");
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

function isRecord(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function scalar(value) {
  if (value === null || value === undefined) return "—";
  if (value === true) return "yes";
  if (value === false) return "no";
  return String(value);
}

// The context as readable data: a list of records is a table, a record a list of terms.
function rendered(value) {
  if (Array.isArray(value)) {
    if (value.length === 0) return el("p", { className: "empty", text: "None." });
    if (value.every(isRecord)) {
      const keys = [...new Set(value.flatMap((row) => Object.keys(row)))];
      const head = el("tr", {}, ...keys.map((k) => el("th", { scope: "col", text: words(k) })));
      const rows = value.map((row) => el("tr", {}, ...keys.map((k) => el("td", {}, rendered(row[k])))));
      return el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows));
    }
    return el("ul", {}, ...value.map((item) => el("li", {}, rendered(item))));
  }
  if (isRecord(value)) {
    const list = el("dl");
    for (const [key, item] of Object.entries(value)) list.append(el("dt", { text: words(key) }), el("dd", {}, rendered(item)));
    return list;
  }
  return document.createTextNode(scalar(value));
}

// The one type a field's schema allows, leaving out a null alternative (an optional field).
function plain(schema) {
  const options = schema.anyOf || schema.oneOf;
  if (Array.isArray(options)) {
    const rest = options.filter((s) => s.type !== "null");
    if (rest.length === 1) return { ...rest[0], description: schema.description, title: schema.title, nullable: true };
  }
  return schema;
}

function field(cap, key, raw, required) {
  const schema = plain(raw || {});
  const id = `f-${cap.name}-${key}`;
  const label = el("label", { htmlFor: id, text: schema.title || words(key) });
  let input;
  let read;
  if (Array.isArray(schema.enum)) {
    input = el("select", { id, name: key }, ...schema.enum.map((v) => el("option", { value: JSON.stringify(v), text: scalar(v) })));
    read = () => JSON.parse(input.value);
  } else if (schema.type === "boolean") {
    input = el("input", { id, name: key, type: "checkbox" });
    read = () => input.checked;
  } else if (schema.type === "integer" || schema.type === "number") {
    input = el("input", { id, name: key, type: "number", step: schema.type === "integer" ? "1" : "any", required });
    read = () => (input.value === "" ? undefined : Number(input.value));
  } else if (schema.type === "string") {
    input = el("input", { id, name: key, type: "text", required });
    if (typeof schema.maxLength === "number") input.maxLength = schema.maxLength;
    read = () => (input.value === "" && !required ? undefined : input.value);
  } else {
    input = el("textarea", { id, name: key, rows: 3, placeholder: "JSON" });
    read = () => (input.value.trim() === "" ? undefined : JSON.parse(input.value));
  }
  const hint = schema.description ? el("small", { text: schema.description }) : null;
  return { node: el("div", { className: "field" }, label, input, hint), read };
}

function form(cap) {
  const schema = cap.input_schema || {};
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  const fields = Object.entries(props).map(([key, raw]) => [key, field(cap, key, raw, required.has(key))]);
  const status = el("p", { className: "status", role: "status" });
  const button = el("button", { type: "submit", text: cap.title || words(cap.name) });
  const node = el(
    "form",
    { className: "capability", name: cap.name },
    el("h3", { text: cap.title || words(cap.name) }),
    cap.description ? el("p", { className: "description", text: cap.description }) : null,
    ...fields.map(([, f]) => f.node),
    button,
    status,
  );
  node.addEventListener("submit", async (event) => {
    event.preventDefault();
    const args = {};
    try {
      for (const [key, f] of fields) {
        const value = f.read();
        if (value !== undefined) args[key] = value;
      }
    } catch {
      show(status, true, "A field holds text that is not JSON.");
      return;
    }
    button.disabled = true;
    try {
      const result = await app.callServerTool({ name: cap.name, arguments: args, _meta: { [ACTOR_META]: "view" } });
      const text = (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
      show(status, Boolean(result.isError), result.isError ? text : "Done.");
      if (!result.isError) {
        node.reset();
        await shareContext(await refresh());
      }
    } catch {
      show(status, true, "The host could not reach the application; nothing is known to have changed.");
    } finally {
      button.disabled = false;
    }
  });
  return node;
}

function show(status, refused, text) {
  status.textContent = text;
  status.classList.toggle("refused", refused);
}

// Marks each form available or not, as the context read says (no word: all are offered).
function mark(available) {
  for (const [name, node] of forms) {
    const now = available === null || available.includes(name);
    node.classList.toggle("unavailable", !now);
    node.dataset.available = String(now);
  }
}

async function refresh() {
  if (!config.context) return null;
  const read = await app.readServerResource({ uri: CONTEXT_URI });
  const item = (read.contents || [])[0];
  const context = JSON.parse(item.text);
  document.getElementById("context").replaceChildren(rendered(context));
  const available = item._meta && Array.isArray(item._meta[AVAILABLE_META]) ? item._meta[AVAILABLE_META] : null;
  mark(available);
  return context;
}

// What the person changed goes to the model too, as the context it would read.
async function shareContext(context) {
  if (context === null || !app.getHostCapabilities()?.updateModelContext) return;
  await app.updateModelContext({
    content: [{ type: "text", text: `The application's context after the person's change: ${JSON.stringify(context)}` }],
    structuredContent: isRecord(context) ? context : { context },
  });
}

// A host that cannot forward resource reads still gets the forms; the context says why not.
function unread() {
  document.getElementById("context").replaceChildren(
    el("p", { className: "empty", text: "The host could not read the application's context." }),
  );
}

function start() {
  if (config.title) document.getElementById("title").textContent = config.title;
  const list = document.getElementById("capabilities");
  for (const cap of config.capabilities) {
    const node = form(cap);
    forms.set(cap.name, node);
    list.append(node);
  }
  // The model called a tool of this view: what it changed is read again.
  app.ontoolresult = () => {
    refresh().catch(unread);
  };
  app
    .connect()
    .then(refresh)
    .catch(unread)
    .finally(() => {
      document.body.dataset.ready = "true";
    });
}

start();
