import { createHash } from "node:crypto";
import { Queue, type RedisOptions } from "bullmq";
import { DeploymentEnvSchema, deploymentSettings } from "../../settings/deployment.js";

/*
 * The BullMQ queue that `eval --queue` and `mine --queue` fill and `tableminds consume` processes empty:
 * one queue on the Redis of TABLEMINDS_QUEUE_URL (or --queue), jobs named by their kind.
 */

export const QUEUE_NAME = "tableminds";

/** How long the first connection may take before the queue counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The queue's Redis URL: the flag's when it gives one (`--queue redis://...`), else
 * TABLEMINDS_QUEUE_URL; a missing or malformed one throws its one-line message.
 */
export function queueUrl(flag: string | boolean | undefined, env = process.env): string {
  if (typeof flag === "string") {
    const parsed = DeploymentEnvSchema.shape.TABLEMINDS_QUEUE_URL.safeParse(flag);
    if (!parsed.success || parsed.data === undefined) {
      throw new Error(`--queue ${flag}: expected redis://host:port (or rediss:// for TLS)`);
    }
    return parsed.data;
  }
  const url = deploymentSettings(env).TABLEMINDS_QUEUE_URL;
  if (url === undefined) {
    throw new Error(
      "no queue: give --queue redis://host:port or set TABLEMINDS_QUEUE_URL (see docs/deploy.md)",
    );
  }
  return url;
}

/** The URL without its password, for messages. */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString().replace(/\/$/, "");
}

/** ioredis options of a redis:// or rediss:// URL (user, password and database number included). */
export function redisOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  const db = Number(parsed.pathname.slice(1) || 0);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(Number.isInteger(db) && db > 0 ? { db } : {}),
    ...(parsed.protocol === "rediss:" ? { tls: {} } : {}),
    // Consumers block on Redis; BullMQ requires this to be unset for them.
    maxRetriesPerRequest: null,
  };
}

/**
 * Fails with one line when the queue's Redis cannot be reached now; the connections made after
 * it reconnect on their own when Redis goes away for a while.
 */
export async function checkQueue(url: string): Promise<void> {
  const connection: RedisOptions = {
    ...redisOptions(url),
    retryStrategy: () => null,
    connectTimeout: 3_000,
  };
  const probe = new Queue(QUEUE_NAME, { connection });
  let lastError: Error | undefined;
  probe.on("error", (error) => {
    lastError = error;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe.waitUntilReady(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer")), CONNECT_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    const reason = (lastError ?? (error as Error)).message.replace(/^connect /, "");
    throw new Error(`the queue at ${shownUrl(url)} cannot be reached (${reason})`);
  } finally {
    clearTimeout(timer);
    await probe.close().catch(() => {});
  }
}

const digest = (text: string, length: number) =>
  createHash("sha256").update(text).digest("hex").slice(0, length);

/**
 * A run's id on the queue: its directory and the start of its first invocation, so every
 * resume of the run has the same id, and a directory emptied and run afresh another.
 */
export function runIdOf(outDir: string, started: string): string {
  return digest(`${outDir}\n${started}`, 16);
}

/**
 * A question's job id: the job's kind, the run's id and a digest of the question's id (which
 * may hold any character, where BullMQ refuses ':'). Adding a job whose id exists does nothing.
 */
export function jobIdOf(kind: string, runId: string, questionId: string): string {
  return `${kind}.${runId}.${digest(questionId, 24)}`;
}
