import { StateSchema, type StateSchemaFields } from "@langchain/langgraph";

/*
 * LangGraph parses every node's write against its key's zod schema, on every step. Our nodes
 * build what they write from data already parsed where it entered: the graph's input, the
 * model's replies (each node's parser), the sandbox's results. Parsing it again cost about a
 * sixth of a run's own overhead (bench/overhead.ts), so a graph runs on `trustedWrites(State)`
 * and keeps `State` itself as its `input`: what a caller sends is still parsed in full.
 *
 * Under the tests (VITEST) each write is still parsed, and one its schema would change or
 * refuse throws: the whole suite vouches that trusting the nodes drops nothing.
 */

export class UncheckedWriteError extends Error {}

/** `schema` whose `validateInput` takes node writes as they are (checked under the tests). */
export function trustedWrites<F extends StateSchemaFields>(
  schema: StateSchema<F>,
  env: NodeJS.ProcessEnv = process.env,
): StateSchema<F> {
  const trusted = new StateSchema(schema.fields);
  Object.defineProperty(trusted, "validateInput", {
    value: env.VITEST !== undefined ? checkedWrite(schema) : async (data: unknown) => data,
  });
  return trusted;
}

function checkedWrite<F extends StateSchemaFields>(schema: StateSchema<F>) {
  return async (data: unknown) => {
    let parsed: unknown;
    try {
      parsed = await schema.validateInput(data);
    } catch (error) {
      throw new UncheckedWriteError(
        `a node wrote what its state schema refuses: ${(error as Error).message.slice(0, 500)}`,
      );
    }
    const changed = firstChange(data, parsed, "");
    if (changed !== null) {
      throw new UncheckedWriteError(
        `a node wrote what its state schema would change, at ${changed}`,
      );
    }
    return data;
  };
}

/** What an `Overwrite` of LangGraph writes (the parsed form holds it under `__overwrite__`). */
function overwritten(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if ("__overwrite__" in value) return value.__overwrite__;
  return "lg_name" in value && value.lg_name === "Overwrite" && "value" in value
    ? value.value
    : value;
}

/** The first place where `parsed` differs from `written` ("key.0.field: a -> b"), or null. */
function firstChange(written: unknown, parsed: unknown, at: string): string | null {
  if (!at) {
    const keys = new Set([...Object.keys(written ?? {}), ...Object.keys(parsed ?? {})]);
    for (const key of keys) {
      const inner = firstChange(
        overwritten((written as Record<string, unknown>)[key]),
        overwritten((parsed as Record<string, unknown>)[key]),
        key,
      );
      if (inner !== null) return inner;
    }
    return null;
  }
  if (Object.is(written, parsed)) return null;
  if (typeof written !== "object" || typeof parsed !== "object" || !written || !parsed) {
    return `${at}: ${JSON.stringify(written)} -> ${JSON.stringify(parsed)}`;
  }
  const keys = new Set([...Object.keys(written), ...Object.keys(parsed)]);
  for (const key of keys) {
    const inner = firstChange(
      (written as Record<string, unknown>)[key],
      (parsed as Record<string, unknown>)[key],
      `${at}.${key}`,
    );
    if (inner !== null) return inner;
  }
  if (Array.isArray(written) !== Array.isArray(parsed)) return `${at}: array or not`;
  if (Object.keys(written).length !== Object.keys(parsed).length) return `${at}: keys differ`;
  return null;
}
