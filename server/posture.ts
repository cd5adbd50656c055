import path from "node:path";
import { OperatorEnvSchema } from "../settings/operator.js";
import { uploadLimitBytes } from "../tables/sources.js";
import { keysOf, readLangGraphJson } from "./access.js";

/** What `tableminds doctor` says about the API server's guards, from langgraph.json and the environment. */
export interface ServerFacts {
  /** langgraph.json names our authentication, with Studio's unchecked pass switched off. */
  authWired: boolean;
  /** Users with an API key; 0: one local user, on loopback only. A bad entry: its problem. */
  keyedUsers: number | string;
  origins: string[];
  tableRoots: string[];
  uploadMb: number;
}

export function serverFacts(
  env: NodeJS.ProcessEnv = process.env,
  configFile = path.resolve("langgraph.json"),
): ServerFacts {
  const config = readLangGraphJson(configFile);
  const authWired = Boolean(
    config.auth?.path.includes("server/auth") && config.auth.disable_studio_auth,
  );
  let keyedUsers: number | string;
  try {
    keyedUsers = new Set(keysOf(env).values()).size;
  } catch (error) {
    keyedUsers = (error as Error).message;
  }
  const roots = OperatorEnvSchema.safeParse(env).data?.TABLEMINDS_TABLE_ROOTS ?? "";
  return {
    authWired,
    keyedUsers,
    origins: config.http?.cors?.allow_origins ?? [],
    tableRoots: roots.split(path.delimiter).filter(Boolean),
    uploadMb: uploadLimitBytes(env) / 1024 / 1024,
  };
}

export function serverDoctorLines(facts: ServerFacts): string[] {
  const who =
    typeof facts.keyedUsers === "string"
      ? `BROKEN - ${facts.keyedUsers}`
      : facts.keyedUsers > 0
        ? `API keys of ${facts.keyedUsers} user(s); each thread is its user's`
        : "no API keys: one local user, served on loopback only";
  return [
    `API server: ${facts.authWired ? who : "NO AUTHENTICATION - langgraph.json lacks auth.path (server/auth.ts) or disable_studio_auth"}`,
    `  web pages allowed: ${facts.origins.length ? facts.origins.join(", ") : "none"}`,
    `  tables by path: ${facts.tableRoots.length ? `under ${facts.tableRoots.join(", ")}` : "none (inline rows and uploads only)"}; uploads up to ${facts.uploadMb} MB`,
    "  sandbox, replay cache, workers folder, local model paths: the operator's only",
  ];
}
