import path from "node:path";
import { z } from "zod";
import {
  type Configuration,
  ConfigurationSchema,
  type OperatorField,
  splitOperatorFields,
} from "./configuration.js";
import { blank } from "./env-values.js";

/*
 * The operator's settings: what a run may read from disk and which code it may load. They come
 * from the environment (langgraph.json's `env` file included) or from the process that runs the
 * graphs in-process (the CLI's flags), never from a run's context, which on a server is the
 * caller's. The configuration fields among them (OPERATOR_FIELDS) are refused in a context.
 */

export const OperatorEnvSchema = z.object({
  TABLEMINDS_SANDBOX: z.preprocess(blank, z.enum(["local", "e2b"]).optional()),
  TABLEMINDS_REPLAY_CACHE: z.preprocess(blank, z.string().optional()),
  TABLEMINDS_TABLE_ROOTS: z.preprocess(blank, z.string().optional()),
});

/** Where this process keeps its files, which Python it runs, which folders hold workers. */
const PlacesEnvSchema = z.object({
  TABLEMINDS_HOME: z.preprocess(blank, z.string().optional()),
  TABLEMINDS_PYTHON: z.preprocess(blank, z.string().trim().optional()),
  TABLEMINDS_WORKERS: z.preprocess(blank, z.string().optional()),
});

const places = (env: NodeJS.ProcessEnv) => PlacesEnvSchema.parse(env);

/** Where tableminds keeps its files: `TABLEMINDS_HOME`, default `./.tableminds`. */
export function tablemindsHome(env: NodeJS.ProcessEnv = process.env): string {
  return places(env).TABLEMINDS_HOME ?? path.resolve(".tableminds");
}

/** The Python the operator named (`TABLEMINDS_PYTHON`), if any. */
export function pythonOverride(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return places(env).TABLEMINDS_PYTHON;
}

/** The folders `TABLEMINDS_WORKERS` names (separated as PATH is), absolute. */
export function workerFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  return rootsOf(places(env).TABLEMINDS_WORKERS ?? "");
}

/** The privacy floor: TABLEMINDS_PRIVACY, which a run may make stricter but never looser. */
const PrivacyFloorSchema = z.preprocess(blank, ConfigurationSchema.shape.privacy.optional());

export type OperatorSettings = Pick<Configuration, OperatorField> & {
  /** The least privacy any run gets (see `privacy` in the configuration). */
  privacy: Configuration["privacy"];
  /**
   * Folders a run's `path` sources may name, absolute. A CLI's default is its working folder;
   * a server's is none (tables arrive inline or as uploads).
   */
  tableRoots: string[];
  /** Files a run may name though they are under no root: the ones given on a command line. */
  tableFiles: string[];
  /** Whether a `local:` model may be named by a path, not only by a name in the models folder. */
  localModelPaths: boolean;
};

let served = false;
let overrides: Partial<OperatorSettings> = {};

function rootsOf(list: string): string[] {
  return list
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.resolve(dir));
}

/** The settings in force: what the process set, else the environment, else the defaults. */
export function operatorSettings(env: NodeJS.ProcessEnv = process.env): OperatorSettings {
  const vars = OperatorEnvSchema.safeParse(env);
  const given = vars.success ? vars.data : {};
  const envRoots = given.TABLEMINDS_TABLE_ROOTS ? rootsOf(given.TABLEMINDS_TABLE_ROOTS) : [];
  return {
    privacy: overrides.privacy ?? privacyFloor(env),
    sandbox: overrides.sandbox ?? given.TABLEMINDS_SANDBOX ?? "local",
    replayCache: overrides.replayCache ?? given.TABLEMINDS_REPLAY_CACHE,
    workersDir: overrides.workersDir,
    tableRoots: overrides.tableRoots ?? (served ? envRoots : [process.cwd(), ...envRoots]),
    tableFiles: overrides.tableFiles ?? [],
    localModelPaths: overrides.localModelPaths ?? !served,
  };
}

/** TABLEMINDS_PRIVACY; a value that is not a mode stops the run rather than be ignored. */
function privacyFloor(env: NodeJS.ProcessEnv): Configuration["privacy"] {
  const parsed = PrivacyFloorSchema.safeParse(env.TABLEMINDS_PRIVACY);
  if (!parsed.success) {
    throw new Error(
      `TABLEMINDS_PRIVACY=${JSON.stringify(env.TABLEMINDS_PRIVACY)} is not a privacy mode: off, values or schema`,
    );
  }
  return parsed.data ?? "off";
}

/** Sets some of the operator's settings for the rest of the process (the CLI's flags, tests). */
export function setOperatorSettings(settings: Partial<OperatorSettings>): void {
  overrides = { ...overrides, ...settings };
}

/**
 * A configuration given to in-process code that the operator runs (the CLI, an evaluation) with
 * its operator fields taken out and set for the process; what is left is a run's context.
 */
export function adoptOperatorFields(given: Partial<Configuration>): Partial<Configuration> {
  const { caller, operator } = splitOperatorFields(given);
  setOperatorSettings(operator);
  return caller;
}

/** Back to the environment and the defaults. */
export function resetOperatorSettings(): void {
  overrides = {};
}

/**
 * Called by the API server's own modules (authentication, routes) when it loads them: tables
 * only inline, uploaded or under TABLEMINDS_TABLE_ROOTS, local models only by name.
 */
export function enterServedMode(): void {
  served = true;
}

/** Whether this process serves other people's runs (enterServedMode was called). */
export function isServed(): boolean {
  return served;
}
