import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/*
 * Who may call the API server, decided from a request's headers alone (server/auth.ts hands
 * LangGraph the answer). With API keys configured, every request carries one. Without, the
 * server serves one local user, and only while it listens on loopback: requests must name a
 * loopback host (no DNS rebinding) and come from no web page but the allowed origins (no
 * cross-site request, which a browser sends without asking when it is a text/plain POST).
 */

export const LOCAL_USER = "local";

const KeyLineSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.@-]{1,64}:\S{16,}$/, "expected user:key, the key at least 16 characters");

export interface Access {
  /** sha256 of each key -> its user. */
  keys: Map<string, string>;
  /** Origins a browser page may call from (langgraph.json's http.cors.allow_origins). */
  origins: string[];
  /** Whether the server listens on loopback only (from LANGGRAPH_API_URL, which it sets). */
  loopback: boolean;
}

const digest = (key: string) => createHash("sha256").update(key).digest("hex");

/** `user:key` entries, comma- or newline-separated, from TABLEMINDS_API_KEYS and the file TABLEMINDS_API_KEYS_FILE names. */
export function keysOf(env: NodeJS.ProcessEnv): Map<string, string> {
  const lines = [env.TABLEMINDS_API_KEYS ?? ""];
  if (env.TABLEMINDS_API_KEYS_FILE) lines.push(readFileSync(env.TABLEMINDS_API_KEYS_FILE, "utf8"));
  const keys = new Map<string, string>();
  for (const entry of lines.join("\n").split(/[,\n]/)) {
    const line = entry.trim();
    if (!line || line.startsWith("#")) continue;
    const parsed = KeyLineSchema.safeParse(line);
    if (!parsed.success) {
      throw new Error(`TABLEMINDS_API_KEYS: an entry is not user:key (key of 16+ characters)`);
    }
    const at = line.indexOf(":");
    keys.set(digest(line.slice(at + 1)), line.slice(0, at));
  }
  return keys;
}

/** What the server's guards read of langgraph.json. */
const LangGraphJsonSchema = z.looseObject({
  auth: z.looseObject({ path: z.string(), disable_studio_auth: z.boolean().optional() }).optional(),
  http: z
    .looseObject({
      cors: z.looseObject({ allow_origins: z.array(z.string()).optional() }).optional(),
    })
    .optional(),
});
export type LangGraphJson = z.infer<typeof LangGraphJsonSchema>;

/** langgraph.json's guards; an empty object when it cannot be read. */
export function readLangGraphJson(configFile = path.resolve("langgraph.json")): LangGraphJson {
  try {
    return LangGraphJsonSchema.parse(JSON.parse(readFileSync(configFile, "utf8")));
  } catch {
    return {};
  }
}

/** The origins langgraph.json lets browsers call from; none when it names none. */
export function allowedOrigins(configFile?: string): string[] {
  return readLangGraphJson(configFile).http?.cors?.allow_origins ?? [];
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

function hostname(hostHeader: string): string {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return "";
  }
}

export function isLoopbackUrl(url: string | undefined): boolean {
  if (!url) return false;
  try {
    return LOOPBACK.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

export function accessFromEnv(env: NodeJS.ProcessEnv = process.env): Access {
  return {
    keys: keysOf(env),
    origins: allowedOrigins(),
    loopback: isLoopbackUrl(env.LANGGRAPH_API_URL),
  };
}

export type Verdict = { user: string } | { status: 401 | 403; message: string };

function presentedKey(headers: Headers): string | undefined {
  const bearer = headers.get("authorization")?.match(/^Bearer\s+(\S+)$/i)?.[1];
  return bearer ?? headers.get("x-api-key") ?? undefined;
}

function userOfKey(access: Access, key: string): string | undefined {
  const wanted = Buffer.from(digest(key), "hex");
  for (const [known, user] of access.keys) {
    if (timingSafeEqual(Buffer.from(known, "hex"), wanted)) return user;
  }
  return undefined;
}

/** Whether a browser sent the request from a page of this server (its own /ui/). */
function sameOrigin(origin: string, host: string | null): boolean {
  try {
    return host !== null && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/**
 * Who sent this request, or why it is refused. A page of this server itself counts as allowed:
 * a page elsewhere that a rebound name sends here passes as the same origin too, but then names
 * a host that is not loopback (refused below) and has no key.
 */
export function decide(access: Access, headers: Headers): Verdict {
  const origin = headers.get("origin");
  if (origin && !access.origins.includes(origin) && !sameOrigin(origin, headers.get("host"))) {
    return {
      status: 403,
      message: `requests from the web page ${origin} are not allowed (http.cors.allow_origins)`,
    };
  }
  if (access.keys.size > 0) {
    const key = presentedKey(headers);
    const user = key ? userOfKey(access, key) : undefined;
    if (user) return { user };
    return {
      status: 401,
      message: key
        ? "unknown API key"
        : "an API key is needed (Authorization: Bearer <key> or X-Api-Key)",
    };
  }
  if (!access.loopback) {
    return {
      status: 401,
      message: "this server listens beyond loopback and has no API keys: set TABLEMINDS_API_KEYS",
    };
  }
  if (!LOOPBACK.has(hostname(headers.get("host") ?? ""))) {
    return { status: 403, message: "a keyless server answers only requests to a loopback host" };
  }
  return { user: LOCAL_USER };
}
