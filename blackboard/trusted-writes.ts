import { StateSchema, type StateSchemaFields } from "@langchain/langgraph";

/*
 * LangGraph parses every node's write against its key's zod schema, on every step. Our nodes
 * build what they write from data already parsed where it entered: the graph's input, the
 * model's replies (each node's parser), the sandbox's results. Parsing it again is work on every
 * step that finds nothing, so a graph runs on `trustedWrites(State)` and keeps `State` itself as
 * its `input`: what a caller sends is still parsed in full.
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
    const changed = firstChange(unwrapped(data), unwrapped(parsed), "");
    if (changed !== null) {
      throw new UncheckedWriteError(
        `a node wrote what its state schema would change, at ${changed}`,
      );
    }
    return data;
  };
}

/** A write with each key's `Overwrite` of LangGraph as the value it holds (parsed, it is held under `__overwrite__`). */
function unwrapped(write: unknown): Record<string, unknown> {
  const entries = Object.entries(write ?? {}).map(([key, value]) => {
    if (typeof value !== "object" || value === null) return [key, value];
    if ("__overwrite__" in value) return [key, value.__overwrite__];
    const overwrite = "lg_name" in value && value.lg_name === "Overwrite" && "value" in value;
    return [key, overwrite ? value.value : value];
  });
  return Object.fromEntries(entries);
}

/** The first place where `parsed` differs from `written` ("key.0.field: a -> b"), or null. */
function firstChange(written: unknown, parsed: unknown, at: string): string | null {
  if (Object.is(written, parsed)) return null;
  if (typeof written !== "object" || typeof parsed !== "object" || !written || !parsed) {
    return `${at}: ${JSON.stringify(written)} -> ${JSON.stringify(parsed)}`;
  }
  const keys = new Set([...Object.keys(written), ...Object.keys(parsed)]);
  for (const key of keys) {
    const inner = firstChange(
      (written as Record<string, unknown>)[key],
      (parsed as Record<string, unknown>)[key],
      at ? `${at}.${key}` : key,
    );
    if (inner !== null) return inner;
  }
  if (Array.isArray(written) !== Array.isArray(parsed)) return `${at}: array or not`;
  if (Object.keys(written).length !== Object.keys(parsed).length) return `${at}: keys differ`;
  return null;
}
