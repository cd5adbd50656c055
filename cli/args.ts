import { InvalidArgumentError, Option } from "commander";
import { graphSpec } from "../graphs/registry.js";

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected an integer >= 0");
  return n;
}

/** `-g, --graph <name>`: a graph of langgraph.json, table_qa unless given. */
export function graphOption(description: string): Option {
  return new Option("-g, --graph <name>", description)
    .default("table_qa")
    .argParser((name: string) => {
      try {
        graphSpec(name);
      } catch (error) {
        throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
      }
      return name;
    });
}
