// Drive foldkit-agent's A2A server with the official A2A JavaScript client (@a2a-js/sdk).
//
//   node tests/interop/a2a_client.mjs http://127.0.0.1:PORT
//
// Prints one JSON object describing what the client saw; tests/test_a2a_interop.py checks it.
// The script only observes: it asserts nothing itself, so every expectation lives in Python.

import { randomUUID } from "node:crypto";
import { Role, taskStateToJSON } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";

const EXT = "https://foldkit-agent.dev/a2a/skills/v1";
const base = process.argv[2];

function request(skill, input) {
  return {
    tenant: "",
    message: {
      messageId: randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [{ content: { $case: "data", value: input }, metadata: undefined, filename: "", mediaType: "" }],
      metadata: undefined,
      extensions: [EXT],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: { [EXT]: { skill } },
  };
}

function describeTask(task) {
  const parts = task.status?.message?.parts ?? [];
  return {
    kind: "task",
    id: task.id,
    state: taskStateToJSON(task.status?.state),
    statusText: parts.filter((p) => p.content?.$case === "text").map((p) => p.content.value),
    statusData: parts.filter((p) => p.content?.$case === "data").map((p) => p.content.value),
    artifacts: (task.artifacts ?? []).map((a) => ({
      name: a.name,
      data: a.parts.filter((p) => p.content?.$case === "data").map((p) => p.content.value),
    })),
  };
}

function describe(result) {
  if (result && typeof result === "object" && "status" in result && "id" in result) {
    return describeTask(result);
  }
  return { kind: "message", value: result };
}

async function attempt(fn) {
  try {
    return await fn();
  } catch (err) {
    return { kind: "error", name: err?.constructor?.name ?? "Error", message: String(err?.message ?? err) };
  }
}

async function session(preferred, title) {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [preferred] }),
  );
  const client = await factory.createFromUrl(base);
  const created = describe(await client.sendMessage(request("create_todo", { title })));
  const fetched = created.kind === "task" ? describeTask(await client.getTask({ tenant: "", id: created.id })) : null;
  const unavailable = describe(await client.sendMessage(request("delete_todo", {})));
  const invalid = describe(await client.sendMessage(request("create_todo", { title: "x", priority: 1 })));
  const unknown = await attempt(async () => describe(await client.sendMessage(request("launch_rockets", {}))));
  const streamed = [];
  for await (const event of client.sendMessageStream(request("create_todo", { title: `${title} (streamed)` }))) {
    streamed.push(event?.payload?.$case ?? (event && "status" in event && "id" in event ? "task" : "other"));
  }
  const extended = await client.getAgentCard({ serviceParameters: { Authorization: "Bearer alice-tok" } });
  return {
    transport: preferred,
    protocolVersion: client.protocolVersion,
    created,
    fetched,
    unavailable,
    invalid,
    unknown,
    streamed,
    extendedSkills: extended.skills.map((s) => s.id),
  };
}

const cardResponse = await fetch(new URL("/.well-known/agent-card.json", base));
const card = await cardResponse.json();
const out = {
  card: {
    name: card.name,
    skills: card.skills.map((s) => s.id),
    extensions: card.capabilities?.extensions?.map((e) => e.uri) ?? [],
    createSchema: card.capabilities?.extensions?.find((e) => e.uri === EXT)?.params?.skills?.create_todo?.inputSchema,
  },
  sessions: [await session("JSONRPC", "Read the guide"), await session("HTTP+JSON", "Write the tests")],
};
process.stdout.write(JSON.stringify(out) + "\n");
