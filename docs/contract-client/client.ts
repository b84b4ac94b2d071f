// A client of the portal, written against the types openapi-typescript
// generates from /api/openapi.json and calling it through openapi-fetch, as a
// portal's build would: it signs in with a hash link's user key and hash,
// loads the demo membership registration, selects every person it may, answers
// each question and ends with the committed registration (DONE, paymentUrl).
// run.sh generates the types, type-checks this file and runs it against a
// real server. Nothing in it is edited by hand to fit the generated code.
import { createHash } from "node:crypto";
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./generated/schema.js";

type Form = components["schemas"]["FormDTO"];
type PersonInput = components["schemas"]["PersonInput"];

const baseUrl = required("PORTAL_URL");
const secret = required("PORTAL_HASH_SECRET");
const userKey = "demo";
const periodId = 1;
// The spec's client-side timeout of POST /api/forms/next.
const nextTimeoutMs = 15_000;

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

function fail(message: string): never {
  throw new Error(message);
}

// The session is the JSESSIONID cookie; Node's fetch keeps no cookies.
let sessionCookie = "";
const cookieJar: Middleware = {
  onRequest({ request }) {
    if (sessionCookie) request.headers.set("Cookie", sessionCookie);
    return request;
  },
  onResponse({ response }) {
    for (const header of response.headers.getSetCookie()) {
      const pair = header.split(";")[0] ?? "";
      if (pair.startsWith("JSESSIONID=")) sessionCookie = pair;
    }
    return response;
  },
};

const client = createClient<paths>({ baseUrl });
client.use(cookieJar);

// answer picks a valid answer for the demo definition's question types.
function answer(form: Form, index: number): string {
  switch (form.questionType) {
    case "TXT":
      return "0612345678"; // the demo's emergency phone: 10 digits
    case "NUM":
      return "1";
    case "DRP":
    case "RDO":
      return form.options?.[0] ?? fail(`${form.questionType} question without options`);
    case "SEL":
      return [form.options?.[0] ?? fail("SEL question without options")].join(","); // SEL: the options separated by commas
    case "BCB":
      return "0";
    case "ITC":
      return "1";
    case "ONE":
      return index === 0 ? "1" : "0";
    case null:
      return fail(`step ${form.step} has no question type`);
  }
}

async function next(body: components["schemas"]["NextRequest"]) {
  return client.POST("/api/forms/next", { body, signal: AbortSignal.timeout(nextTimeoutMs) });
}

async function main(): Promise<void> {
  const hash = createHash("md5").update(secret + userKey).digest("hex");
  const login = await client.POST("/api/auth/external-login", { body: { userKey, hash } });
  if (login.response.status !== 200 || !sessionCookie) {
    fail(`login: status ${login.response.status}, cookie ${sessionCookie ? "set" : "missing"}`);
  }

  const loaded = await client.GET("/api/forms/membership/{periodid}", {
    params: { path: { periodid: periodId }, query: { userKey } },
  });
  if (!loaded.data) fail(`load: status ${loaded.response.status}: ${loaded.error?.message}`);
  let form: Form = loaded.data;
  if (loaded.response.status !== 201 || form.processState !== "INIT" || form.step !== 0) {
    fail(`load: status ${loaded.response.status}, ${form.processState} at step ${form.step}; want a new process (201, INIT, 0)`);
  }

  const selected: PersonInput[] = form.people.filter((p) => p.canSelect).map((p) => ({ id: p.id, selected: true }));
  if (selected.length === 0) fail("no person can be selected");
  let res = await next({ processId: form.processId, step: 0, people: selected });
  if (!res.data) fail(`select: status ${res.response.status}: ${res.error?.message}`);
  form = res.data;

  let questions = 0;
  while (form.processState === "RUNNING") {
    if (++questions > 20) fail("more than 20 questions");
    const shown = form.people.filter((p) => !p.hide);
    if (form.questionType === "TXT" && form.required) {
      // A rule broken on purpose: the typed process error names the persons.
      const bad = await next({ processId: form.processId, step: form.step, people: shown.map((p) => ({ id: p.id, answer: "" })) });
      const err = bad.error;
      if (bad.response.status !== 422 || !err || !("processState" in err) || err.processState !== "ERROR") {
        fail(`an empty required answer: status ${bad.response.status}, want 422 with a process error`);
      }
      if (err.errors.people.length !== shown.length) fail(`the process error names ${err.errors.people.length} persons, want ${shown.length}`);
    }
    res = await next({ processId: form.processId, step: form.step, people: shown.map((p, i) => ({ id: p.id, answer: answer(form, i) })) });
    if (!res.data) fail(`step ${form.step} (${form.questionType}): status ${res.response.status}: ${res.error?.message}`);
    form = res.data;
  }

  if (form.processState !== "DONE" || !form.paymentUrl) fail(`ended in ${form.processState} without a payment link`);
  if (!form.people.every((p) => p.status === "Pending Payment" && p.paymentUrl === form.paymentUrl)) {
    fail("the committed registration's persons are not all Pending Payment with the payment link");
  }

  // A stale step on a committed registration: the typed HTTP error body.
  const stale = await next({ processId: form.processId, step: 0, people: [] });
  if (stale.response.status !== 409 || !stale.error || !("status" in stale.error) || stale.error.status !== 409) {
    fail(`a stale submission: status ${stale.response.status}, want 409 with an HTTP error body`);
  }

  console.log(`contract-client: ${selected.length} persons, ${questions} questions, DONE at step ${form.step} with a payment link`);
}

main().catch((err: unknown) => {
  console.error("contract-client: FAILED:", err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
